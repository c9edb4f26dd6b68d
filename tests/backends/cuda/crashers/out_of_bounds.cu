// Writes far outside its output: the device faults (illegal address); only this runner may die.
#include "kevolve_kernel.h"
// @kevolve kernel oob
// @kevolve grid cdiv(N, 256)
// @kevolve block 256
extern "C" __global__ void oob(const kv_cuda_args a) {
  const int64_t n = kv_numel(&a.inputs[0]);
  float* y = (float*)a.outputs[0].data;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i + (int64_t(1) << 40)] = 1.0f;
}
