// Timing oracle: an honest GELU that makes exactly 1 pass(es) over the data (each pass reads x and writes y),
// so its measured time is 1 times that of one pass, give or take launch overhead.
#include <cuda_runtime.h>
#include "kevolve_kernel.h"

__global__ void gelu_k(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const long long n = kv_numel(&a->inputs[0]);
  const unsigned blocks = (unsigned)((n + 255) / 256);
  for (int pass = 0; pass < 1; ++pass)
    gelu_k<<<blocks, 256, 0, (cudaStream_t)a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
