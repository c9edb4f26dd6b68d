// Never finishes: the evaluator's deadline must kill its runner and report a timeout.
#include "kevolve_kernel.h"
// @kevolve kernel spin
// @kevolve grid cdiv(N, 256)
// @kevolve block 256
extern "C" __global__ void spin(const kv_cuda_args a) {
  volatile float* y = (volatile float*)a.outputs[0].data;
  for (;;) y[threadIdx.x] = 0.0f;
}
