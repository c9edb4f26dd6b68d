// Shared by the phase programs (tools/*_phases.cu), included after the candidate (which brings
// kevolve_kernel.h): device tensors, and timing (each call after a 256 MB write that flushes the L2,
// CUDA events around the call on the default stream, 31 calls of which the first is dropped).
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>

// A device copy of `bytes` of host data (or uninitialised memory when host is null) as a kv_tensor of dtype:
// 1-d of d0 elements when d1 is 0, else a contiguous d0 x d1 matrix.
inline kv_tensor device_tensor(const void* host, long long bytes, int dtype, long long d0, long long d1) {
  kv_tensor t = {};
  cudaMalloc(&t.data, bytes > 0 ? bytes : 8);
  if (host) cudaMemcpy(t.data, host, bytes, cudaMemcpyHostToDevice);
  t.dtype = dtype;
  t.ndim = d1 ? 2 : 1;
  t.shape[0] = d0;
  t.shape[1] = d1;
  t.strides[0] = d1 ? d1 : 1;
  t.strides[1] = 1;
  return t;
}

// A device copy of host int64 values (or n uninitialised ones when host is null), as a 1-d kv_tensor.
inline kv_tensor device_int64(const long long* host, long long n) { return device_tensor(host, n * 8, KV_INT64, n, 0); }

struct PhaseTimes {
  float median = 0, p10 = 0, p90 = 0;  // ms
  bool ok = true;                      // false: a call returned false
};

// call() launches the work and returns whether it could; flush is a 256 MB device buffer.
template <class Call>
PhaseTimes time_calls(char* flush, Call call) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  PhaseTimes t;
  for (int r = 0; r < 31 && t.ok; ++r) {
    cudaMemset(flush, r, 256 << 20);
    cudaEventRecord(e0);
    t.ok = call();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float x = 0;
    cudaEventElapsedTime(&x, e0, e1);
    if (r) ms.push_back(x);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  t.ok = t.ok && cudaGetLastError() == cudaSuccess && ms.size() == 30;
  if (t.ok) {
    std::sort(ms.begin(), ms.end());
    t.median = ms[ms.size() / 2];
    t.p10 = ms[3];
    t.p90 = ms[ms.size() - 4];
  }
  return t;
}
