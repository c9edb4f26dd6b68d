// merge_bucketized_dense phases: times a rendered kernel-only candidate at the GPU bench size (B = 2^20, F = 32,
// 1–64 boundaries per feature uniform in [-3, 3], x ~ N(0, 1.5)), after a 256 MB write that flushes the L2,
// CUDA events, median of 30; checks every output against the definition (count of boundaries < x),
// at the bench size and on a hard set: ties, duplicated and infinite boundaries, one feature whose 60
// boundaries sit within 0.001, x with infinities and NaN. Build on the GPU node:
//   kevolve kb template merge_bucketized_dense ... > v.cu
//   nvcc -O3 -arch=sm_90 -I backends -DKV_SRC=\"v.cu\" tools/merge_phases.cu -o phases
//   ./phases NAME GRID BLOCK   (the launch its @kevolve lines give at B = 2^20, F = 32)
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include KV_SRC
#include "phase_timing.cuh"

struct Data {
  long long B, F;
  std::vector<float> x, bnd;
  std::vector<long long> off;
};

// runs the candidate on d (timed when flush is set) and returns its wrong outputs
static long long run(const char* name, const Data& d, unsigned grid, unsigned block, char* flush) {
  kv_cuda_args a = {};
  a.inputs[0] = device_tensor(d.x.data(), d.x.size() * 4, KV_FLOAT32, d.B, d.F);
  a.inputs[1] = device_tensor(d.off.data(), d.off.size() * 8, KV_INT64, d.F + 1, 0);
  a.inputs[2] = device_tensor(d.bnd.data(), d.bnd.size() * 4, KV_FLOAT32, (long long)d.bnd.size(), 0);
  a.outputs[0] = device_tensor(nullptr, d.B * d.F * 8, KV_INT64, d.B, d.F);
  a.n_inputs = 3;
  a.n_outputs = 1;
  if (flush) {
    const PhaseTimes t = time_calls(flush, [&] {
      merge_bucketized_dense_kernel<<<grid, block>>>(a);
      return true;
    });
    if (!t.ok) {
      printf("launch error: %s\n", cudaGetErrorString(cudaGetLastError()));
      exit(1);
    }
    const double bytes = 12.0 * d.B * d.F;
    printf("%s: median %.4f ms (p10 %.4f p90 %.4f), %.0f GB/s of x and out\n", name, t.median, t.p10, t.p90,
           bytes / t.median / 1e6);
  }
  cudaMemset(a.outputs[0].data, 0xff, d.B * d.F * 8);
  merge_bucketized_dense_kernel<<<grid, block>>>(a);
  std::vector<long long> got(d.B * d.F);
  cudaMemcpy(got.data(), a.outputs[0].data, got.size() * 8, cudaMemcpyDeviceToHost);
  long long bad = 0;
  for (long long b = 0; b < d.B; ++b)
    for (long long f = 0; f < d.F; ++f) {
      const float v = d.x[b * d.F + f];
      long long want = d.off[f] - d.off[0] + f;
      for (long long j = d.off[f]; j < d.off[f + 1]; ++j) want += d.bnd[j] < v;
      bad += got[b * d.F + f] != want;
    }
  for (int i = 0; i < 3; ++i) cudaFree(a.inputs[i].data);
  cudaFree(a.outputs[0].data);
  return bad;
}

// The hard set: B rows of F features; ties, duplicated and infinite boundaries, a cluster, tiny and huge
// ranges; x with ties, infinities, NaN.
static Data hard_set(std::mt19937_64& rng, long long B, long long F) {
  std::normal_distribution<float> normal(0.f, 1.5f);
  std::uniform_real_distribution<float> uni(-3.f, 3.f);
  Data hard{B, F, {}, {}, {0}};
  const float inf = INFINITY;
  for (long long f = 0; f < hard.F; ++f) {
    std::vector<float> s;
    const long long len = 1 + rng() % 64;
    switch (f % 8) {
      case 0:
        for (long long j = 0; j < len; ++j) s.push_back(std::round(uni(rng) * 4) / 4);
        break;  // ties
      case 1:
        s.assign(len, 0.5f);
        break;  // all equal
      case 2:
        for (long long j = 0; j < 60; ++j) s.push_back(0.001f * j / 60);
        s.push_back(3.f);
        break;  // clustered
      case 3:
        s.push_back(-inf);
        for (long long j = 1; j < len; ++j) s.push_back(uni(rng));
        break;
      case 4:
        for (long long j = 0; j + 1 < len; ++j) s.push_back(uni(rng));
        s.push_back(inf);
        break;
      case 5:
        s.push_back(1e-30f);
        s.push_back(2e-30f);
        break;  // a tiny range
      case 6:
        s.push_back(-3e38f);
        s.push_back(3e38f);
        break;  // a range whose width overflows
      default:
        for (long long j = 0; j < len; ++j) s.push_back(uni(rng));
        break;
    }
    std::sort(s.begin(), s.end());
    hard.bnd.insert(hard.bnd.end(), s.begin(), s.end());
    hard.off.push_back(hard.off.back() + (long long)s.size());
  }
  hard.x.resize(hard.B * hard.F);
  for (long long i = 0; i < (long long)hard.x.size(); ++i) {
    const long long f = i % hard.F, r = rng() % 16;
    const long long len = hard.off[f + 1] - hard.off[f];
    hard.x[i] = r < 6    ? hard.bnd[hard.off[f] + rng() % len]  // a tie
                : r == 6 ? inf
                : r == 7 ? -inf
                : r == 8 ? NAN
                : r == 9 ? 1.5e-30f
                         : normal(rng);
  }
  return hard;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s NAME GRID BLOCK (the launch the candidate's @kevolve lines give at B = 2^20, F = 32)\n",
            argv[0]);
    return 2;
  }
  const unsigned grid = atoi(argv[2]), block = atoi(argv[3]);
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.f, 1.5f);
  std::uniform_real_distribution<float> uni(-3.f, 3.f);
  Data bench{1 << 20, 32, {}, {}, {0}};
  for (long long f = 0; f < bench.F; ++f) {
    const long long len = 1 + rng() % 64;
    std::vector<float> s(len);
    for (auto& b : s) b = uni(rng);
    std::sort(s.begin(), s.end());
    bench.bnd.insert(bench.bnd.end(), s.begin(), s.end());
    bench.off.push_back(bench.off.back() + len);
  }
  bench.x.resize(bench.B * bench.F);
  for (auto& v : bench.x) v = normal(rng);
  char* flush;
  cudaMalloc(&flush, 256 << 20);
  long long bad = run(argv[1], bench, grid, block, flush);
  printf("%s bench: %lld wrong\n", argv[1], bad);
  bad = run(argv[1], bench, grid, block, flush);
  printf("%s bench (again): %lld wrong\n", argv[1], bad);

  for (long long F : {32ll, 96ll, 33ll}) {  // F = 96: a lane meets four features; 33: no fixed features
    const Data hard = hard_set(rng, 131072 / F, F);
    bad = run(argv[1], hard, grid, block, nullptr);
    printf("%s hard set, F = %lld: %lld wrong\n", argv[1], F, bad);
  }
  return 0;
}
