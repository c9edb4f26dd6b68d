// map_id phases: times a rendered map_id host-code candidate (search = hash or directory, kevolve_kernel) at
// the GPU bench size (K = 2^20 sorted keys below 10^12, N = 2^24 ids, half of them hits) with N ids and with
// none (the hash's clear and build alone; the directory builds nothing when there are no ids), each after a 256 MB write that flushes the L2, CUDA events, median of 30; then
// checks every output against a binary search. Build on the GPU node:
//   kevolve kb template map_id --set search=hash ... > v.cu
//   nvcc -O3 -arch=sm_90 -I backends -DKV_SRC=\"v.cu\" tools/map_id_phases.cu -o phases && ./phases NAME
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>
#include KV_SRC
#include "phase_timing.cuh"
int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s NAME (a label printed on every line)\n", argv[0]);
    return 2;
  }
  const long long K = 1 << 20, N = 1 << 24;
  std::mt19937_64 rng(7);
  std::vector<long long> keys;
  while ((long long)keys.size() < K) {
    while ((long long)keys.size() < K) keys.push_back(rng() % 1000000000000ll);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  std::vector<long long> ids(N);
  for (auto& x : ids) x = (rng() & 1) ? keys[rng() % K] : (long long)(rng() % 1000000000000ll);
  kv_tensor in[2] = {device_int64(keys.data(), K), device_int64(ids.data(), N)}, out[1] = {device_int64(nullptr, N)};
  char* flush;
  cudaMalloc(&flush, 256 << 20);
  kv_args a{in, 2, out, 1, nullptr, 0, nullptr};
  for (long long n : {N, 0ll, N}) {
    in[1].shape[0] = n;
    out[0].shape[0] = n;
    const PhaseTimes t = time_calls(flush, [&] { return kevolve_kernel(&a) == 0; });
    if (!t.ok) {
      printf("kernel error\n");
      return 1;
    }
    printf("%s N=%lld: median %.4f ms (p10 %.4f p90 %.4f)\n", argv[1], n, t.median, t.p10, t.p90);
  }
  std::vector<long long> got(N);
  in[1].shape[0] = N;
  out[0].shape[0] = N;
  kevolve_kernel(&a);
  cudaMemcpy(got.data(), out[0].data, N * 8, cudaMemcpyDeviceToHost);
  long long bad = 0;
  for (long long i = 0; i < N; ++i) {
    auto it = std::lower_bound(keys.begin(), keys.end(), ids[i]);
    long long want = (it != keys.end() && *it == ids[i]) ? it - keys.begin() : -1;
    bad += got[i] != want;
  }
  printf("%s: %lld wrong\n", argv[1], bad);
  return 0;
}
