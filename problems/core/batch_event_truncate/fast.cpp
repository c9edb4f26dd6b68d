// batch_event_truncate, fast: the segments are split into one contiguous chunk per OpenMP thread.
// Pass 1: each thread sums its chunk's input and output sizes (and writes out_lengths);
// a tiny exclusive scan over the per-thread sums gives every chunk its input and output start;
// pass 2: each thread copies its segments' tails in parallel. Only the kept values are read;
// timestamps are not needed (segments are already in time order).
#include "kevolve_kernel.h"
#include <cstring>
#include <omp.h>

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t* __restrict lengths = static_cast<const int64_t*>(a->inputs[0].data);
  const int64_t* __restrict values = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* __restrict out_values = static_cast<int64_t*>(a->outputs[0].data);
  int64_t* __restrict out_lengths = static_cast<int64_t*>(a->outputs[1].data);
  const int64_t B = a->inputs[0].shape[0];
  const int64_t K = int64_t(a->params[0]);
  constexpr int kMaxThreads = 256;
  int64_t in_sum[kMaxThreads + 1], out_sum[kMaxThreads + 1];
  int nth = omp_get_max_threads();
  if (nth > kMaxThreads) nth = kMaxThreads;
#pragma omp parallel num_threads(nth)
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t b0 = B * t / T, b1 = B * (t + 1) / T;
    int64_t si = 0, so = 0;
#pragma omp simd reduction(+ : si, so)
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = lengths[b];
      const int64_t keep = len < K ? len : K;
      out_lengths[b] = keep;
      si += len;
      so += keep;
    }
    in_sum[t + 1] = si;
    out_sum[t + 1] = so;
#pragma omp barrier
#pragma omp single
    {
      in_sum[0] = out_sum[0] = 0;
      for (int i = 1; i <= T; ++i) {
        in_sum[i] += in_sum[i - 1];
        out_sum[i] += out_sum[i - 1];
      }
    }  // implicit barrier
    int64_t in = in_sum[t], m = out_sum[t];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = lengths[b];
      const int64_t keep = out_lengths[b];
      const int64_t* __restrict src = values + in + (len - keep);
      int64_t* __restrict dst = out_values + m;
      if (keep <= 16) {
        for (int64_t j = 0; j < keep; ++j) dst[j] = src[j];
      } else {
        std::memcpy(dst, src, sizeof(int64_t) * size_t(keep));
      }
      in += len;
      m += keep;
    }
  }
  return 0;
}
