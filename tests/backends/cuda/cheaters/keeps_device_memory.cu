// Cheater: a correct host-code gelu that takes 2 GiB of device memory on its first call and keeps it (a
// candidate could hoard the device this way, or hide state there). The runner counts what the candidate
// takes and keeps across its batches: a runtime error naming the cap.
#include <cuda_runtime.h>
#include "kevolve_kernel.h"

__global__ void gelu_k(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}

extern "C" int kevolve_kernel(const kv_args* a) {
  static void* hoard = nullptr;
  if (!hoard && cudaMalloc(&hoard, size_t(2) << 30) != cudaSuccess) return 2;
  const long long n = kv_numel(&a->inputs[0]);
  const unsigned blocks = (unsigned)((n + 255) / 256);
  gelu_k<<<blocks, 256, 0, (cudaStream_t)a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
