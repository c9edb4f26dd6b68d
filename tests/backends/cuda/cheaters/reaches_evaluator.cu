// Cheater (isolation, host code): reaches for the trusted evaluator from inside the runner — its memory
// through /proc/<ppid>/mem (where the expected outputs live) and its scheduling priority (to slow the
// reference). Each reach that works poisons the output with NaN, so the verdict shows whether the runner
// let it through: confined, the renice is a forbidden call that kills the runner (rejected [isolation]).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kevolve_kernel.h"

__global__ void gelu_k(const float* x, float* y, long long n, float poison) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f)) + poison;
}

static int reaches() {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
  int got = 0;
  const int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    ++got;
    close(fd);
  }
  if (setpriority(PRIO_PROCESS, getppid(), 19) == 0) ++got;
  return got;
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const long long n = kv_numel(&a->inputs[0]);
  const unsigned blocks = (unsigned)((n + 255) / 256);
  const float poison = reaches() ? __builtin_nanf("") : 0.f;
  gelu_k<<<blocks, 256, 0, (cudaStream_t)a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n,
                                                      poison);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
