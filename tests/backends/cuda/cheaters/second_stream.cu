// Cheater: does the real work on a stream of its own (name pasted together to slip past the source scan)
// and returns at once, so events on the harness's stream measure almost nothing. Caught by escaped_work:
// outputs still changing after the end event, and a wall-clock batch far slower than the events.
#include <cuda_runtime.h>
#include "kevolve_kernel.h"

#define PASTE(a, b) a##b

__global__ void gelu_slow(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < 64; ++k) v = v * 0.999999f + 1e-7f;  // make the hidden work take measurable time
  y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f)) + (v - v);
}

extern "C" int kevolve_kernel(const kv_args* a) {
  static cudaStream_t hidden = nullptr;
  if (!hidden) PASTE(cudaStream, CreateWithFlags)(&hidden, cudaStreamNonBlocking);
  const long long n = kv_numel(&a->inputs[0]);
  gelu_slow<<<(unsigned)((n + 255) / 256), 256, 0, hidden>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return 0;
}
