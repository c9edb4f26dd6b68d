// Cheater: a correct host-code gelu whose first call starts a host thread (its name assembled by the
// preprocessor, so the raw source scan does not see it) that keeps spin kernels in flight on a stream of its
// own, with 512 MiB of device memory, for ever: work that outlives every call, and would outlive the
// evaluation if the runner's processes and threads were not all ended with it. The scan of the preprocessed
// source refuses it; with that scan off, its evaluation's cgroup is what ends it.
#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include "kevolve_kernel.h"

#define KV_CAT(a, b) a##b

__global__ void gelu_k(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}

__global__ void spin_k(unsigned long long cycles, int* sink) {
  const unsigned long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0) atomicAdd(sink, 1);
}

static void* spinner(void*) {
  cudaStream_t s;
  if (KV_CAT(cudaStream, CreateWithFlags)(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  void* hold = nullptr;
  cudaMalloc(&hold, size_t(512) << 20);
  int* sink = nullptr;
  cudaMalloc(&sink, sizeof(int));
  for (;;) {
    spin_k<<<132, 128, 0, s>>>(20000000ull, sink);
    cudaStreamSynchronize(s);
  }
  return nullptr;
}

extern "C" int kevolve_kernel(const kv_args* a) {
  static bool started = false;
  if (!started) {
    started = true;
    std::fprintf(stderr, "host_thread_spinner pid %d\n", (int)getpid());  // for the test to look for it after
    pthread_t t;
    KV_CAT(pthread_, create)(&t, nullptr, spinner, nullptr);
  }
  const long long n = kv_numel(&a->inputs[0]);
  const unsigned blocks = (unsigned)((n + 255) / 256);
  gelu_k<<<blocks, 256, 0, (cudaStream_t)a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
