#include "kevolve_kernel.h"
// Honest kernel-only gelu: one thread per element, exact erf form (what F.gelu computes).
// @kevolve kernel gelu_k
// @kevolve grid cdiv(N, 256)
// @kevolve block 256
extern "C" __global__ void gelu_k(const kv_cuda_args a) {
  const int64_t n = kv_numel(&a.inputs[0]);
  const float* x = (const float*)a.inputs[0].data;
  float* y = (float*)a.outputs[0].data;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}
