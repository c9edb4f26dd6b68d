// Cheater (isolation, host code): reaches outside the runner the way a CPU cheater would: opens a socket (to
// fetch an answer, or to report one), which the runner's seccomp allow-list must stop. Confined, the call
// kills the runner (SIGSYS) and the verdict is rejected [isolation]; unconfined it computes an honest GELU.
#include <cuda_runtime.h>
#include <unistd.h>

#define PASTE(a, b) a##b  // names pasted together to slip past the source scan: the sandbox must stop them

#include "kevolve_kernel.h"

__global__ void gelu_k(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const long s = PASTE(sys, call)(41 /* x86-64 socket */, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
  if (s >= 0) close((int)s);
  const long long n = kv_numel(&a->inputs[0]);
  gelu_k<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)a->stream>>>((const float*)a->inputs[0].data,
                                                                              (float*)a->outputs[0].data, n);
  return 0;
}
