// batch_event_truncate phases: times a rendered kernel-only candidate at the GPU bench size (B = 262144,
// lengths uniform in [0, 64)) with K = 16 (the problem), K = 0 (no events kept: the scan and the look-back
// alone) and K = 64 (every event kept: a copy of all the values), each after a 256 MB write that flushes the
// L2, CUDA events, median of 30, every output checked; and an empty kernel with the same launch (the
// launch's own cost). Build on the GPU node:
//   kevolve kb template batch_event_truncate ... > v.cu
//   nvcc -O3 -arch=sm_90 -I backends -DKV_SRC=\"v.cu\" tools/batch_event_phases.cu -o phases
//   ./phases NAME GRID BLOCK DYNAMIC_SMEM   (the launch its @kevolve lines give at B = 262144)
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>
#include <vector>
#include KV_SRC
#include "phase_timing.cuh"
// The same launch doing nothing: what the launch itself costs at this grid, block and shared memory.
__global__ void empty_kernel(const kv_cuda_args a) {
  extern __shared__ unsigned char unused[];
  if (a.n_params < 0) unused[threadIdx.x] = 0;
}

// Holds its SM (one block of 1024 threads and 200 KB of shared memory) for ns nanoseconds of wall time.
__global__ void hold_sm(unsigned long long ns) {
  extern __shared__ unsigned char unused[];
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
  if (t == 0) unused[threadIdx.x] = 0;
}

// Forward progress when the grid does not fit: another stream's kernel holds most SMs for 20 ms, so only
// part of the grid is resident at first; a block that waited for a chunk whose block cannot start would
// hang here (reported after 10 s of wall time, when the holder has long finished). The exit code: 1 on a hang.
int forward_progress(const char* name, unsigned grid, unsigned block, unsigned smem, kv_cuda_args a,
                     const std::function<long long()>& wrong_16) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int held = sms - sms / 8, hold_smem = 200 * 1024;
  cudaFuncSetAttribute(hold_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, hold_smem);
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaMemset(a.outputs[0].data, 0, a.outputs[0].shape[0] * 8);
  cudaMemset(a.outputs[1].data, 0, a.outputs[1].shape[0] * 8);
  cudaDeviceSynchronize();
  hold_sm<<<held, 1024, hold_smem, s1>>>(20000000ull);
  batch_event_truncate_kernel<<<grid, block, smem, s2>>>(a);
  const auto t0 = std::chrono::steady_clock::now();
  cudaError_t q;
  while ((q = cudaStreamQuery(s2)) == cudaErrorNotReady &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (q == cudaErrorNotReady) {
    printf("%s with %d of %d SMs held by another kernel: did not finish in 10 s (hang)\n", name, held, sms);
    return 1;
  }
  cudaDeviceSynchronize();
  printf("%s K=16 with %d of %d SMs held by another kernel for 20 ms: %s, %lld wrong\n", name, held, sms,
         cudaGetErrorString(q), wrong_16());
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr,
            "usage: %s NAME GRID BLOCK DYNAMIC_SMEM (the launch the candidate's @kevolve lines give at B = 262144)\n",
            argv[0]);
    return 2;
  }
  const long long B = 262144;
  const unsigned grid = atoi(argv[2]), block = atoi(argv[3]), smem = atoi(argv[4]);
  std::mt19937_64 rng(11);
  std::vector<long long> len(B);
  long long n = 0;
  for (auto& l : len) {
    l = rng() % 64;
    n += l;
  }
  std::vector<long long> vals(n);
  for (auto& v : vals) v = rng() % 1000000000;
  const kv_tensor lengths = device_int64(len.data(), B), values = device_int64(vals.data(), n);
  const kv_tensor out_values = device_int64(nullptr, n), out_lengths = device_int64(nullptr, B);
  char* flush;
  cudaMalloc(&flush, 256 << 20);
  if (smem > 0) cudaFuncSetAttribute(batch_event_truncate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  {
    if (smem > 0) cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    const kv_cuda_args none = {};
    const PhaseTimes t = time_calls(flush, [&] {
      empty_kernel<<<grid, block, smem>>>(none);
      return true;
    });
    printf("%s empty launch: median %.4f ms\n", argv[1], t.median);
  }
  auto args = [&](long long K) {
    kv_cuda_args a = {};
    a.inputs[0] = lengths;
    a.inputs[1] = values;
    a.inputs[2] = values;  // timestamps: not read by the kernel
    a.outputs[0] = out_values;
    a.outputs[1] = out_lengths;
    a.n_inputs = 3;
    a.n_outputs = 2;
    a.n_params = 1;
    a.params[0] = K;
    return a;
  };
  // the outputs' wrong elements against the definition, for K
  auto wrong = [&](long long K) {
    long long m = 0;
    for (auto l : len) m += std::min(l, K);
    std::vector<long long> ov(m), ol(B);
    cudaMemcpy(ov.data(), out_values.data, m * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(ol.data(), out_lengths.data, B * 8, cudaMemcpyDeviceToHost);
    long long bad = 0, in = 0, o = 0;
    for (long long b = 0; b < B; ++b) {
      const long long k = std::min(len[b], K);
      bad += ol[b] != k;
      for (long long j = 0; j < k; ++j) bad += ov[o + j] != vals[in + len[b] - k + j];
      in += len[b];
      o += k;
    }
    return bad;
  };
  for (long long K : {16ll, 0ll, 64ll, 16ll}) {
    const kv_cuda_args a = args(K);
    long long m = 0;
    for (auto l : len) m += std::min(l, K);
    const PhaseTimes t = time_calls(flush, [&] {
      batch_event_truncate_kernel<<<grid, block, smem>>>(a);
      return true;
    });
    if (!t.ok) {
      printf("launch error\n");
      return 1;
    }
    const long long bad = wrong(K);
    const double bytes = 8.0 * (2 * B + 2 * m);  // lengths in, lengths out, kept values in and out
    printf("%s K=%lld: median %.4f ms (p10 %.4f p90 %.4f), %lld wrong, kept %lld, %.0f GB/s of kept bytes\n", argv[1],
           K, t.median, t.p10, t.p90, bad, m, bytes / t.median / 1e6);
  }
  return forward_progress(argv[1], grid, block, smem, args(16), [&] { return wrong(16); });
}
