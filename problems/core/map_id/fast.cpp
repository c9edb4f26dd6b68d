// map_id, fast: build a radix directory over the key range once per call (parallel, O(K)), then
// answer each id with one directory probe plus a short scan of its bucket, instead of a
// ~log2(K)-deep binary search with a cache miss per level. Ids are processed in groups with
// software prefetch of the directory slots and then of the key buckets, so the misses of a group
// overlap. Buckets average ~2 keys for uniform keys; skewed buckets fall back to binary search,
// so any sorted unique key table is answered correctly.
#include "kevolve_kernel.h"
#include <cstdlib>

namespace {
inline int64_t search_bucket(const int64_t* __restrict keys, int64_t lo, int64_t hi, int64_t v) {
  if (hi - lo <= 16) {
    int64_t r = -1;
    for (int64_t k = lo; k < hi; ++k) r = keys[k] == v ? k : r;
    return r;
  }
  const int64_t end = hi;
  while (lo < hi) {  // first index with keys[index] >= v
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return (lo < end && keys[lo] == v) ? lo : -1;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t* __restrict keys = static_cast<const int64_t*>(a->inputs[0].data);
  const int64_t* __restrict ids = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* __restrict out = static_cast<int64_t*>(a->outputs[0].data);
  const int64_t K = a->inputs[0].shape[0], N = a->inputs[1].shape[0];
  if (K == 0) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) out[i] = -1;
    return 0;
  }
  const int64_t kmin = keys[0], kmax = keys[K - 1];
  const uint64_t range = uint64_t(kmax) - uint64_t(kmin);
  // Directory of nb = 2^nbits buckets (about K/2), each covering 2^shift consecutive key values.
  int nbits = 0;
  while ((int64_t(1) << nbits) < K / 2 && nbits < 40) ++nbits;
  const int64_t nb = int64_t(1) << nbits;
  int shift = 0;
  while (shift < 64 && (range >> shift) >= uint64_t(nb)) ++shift;
  // shift == 64 cannot happen: range >> 63 <= 1 < nb unless nb == 1, handled by the loop bound.
  auto bucket = [&](int64_t v) -> int64_t {
    return shift >= 64 ? 0 : int64_t((uint64_t(v) - uint64_t(kmin)) >> shift);
  };
  int64_t* dir = static_cast<int64_t*>(std::malloc(sizeof(int64_t) * size_t(nb + 1)));
  if (!dir) return 1;
  const int64_t blast = bucket(kmax);
#pragma omp parallel
  {
    // dir[b] = first key index whose bucket is >= b
#pragma omp for schedule(static)
    for (int64_t i = 0; i < K; ++i) {
      const int64_t bi = bucket(keys[i]);
      const int64_t bp = i == 0 ? -1 : bucket(keys[i - 1]);
      for (int64_t b = bp + 1; b <= bi; ++b) dir[b] = i;
    }
#pragma omp for schedule(static)
    for (int64_t b = blast + 1; b <= nb; ++b) dir[b] = K;

    constexpr int G = 32;
#pragma omp for schedule(static)
    for (int64_t i0 = 0; i0 < N; i0 += G) {
      const int g = int(N - i0 < G ? N - i0 : G);
      int64_t bk[G];
      for (int j = 0; j < g; ++j) {
        const int64_t v = ids[i0 + j];
        const bool in = v >= kmin && v <= kmax;
        bk[j] = in ? bucket(v) : -1;
        if (in) __builtin_prefetch(dir + bk[j]);
      }
      int64_t lo[G], hi[G];
      for (int j = 0; j < g; ++j) {
        if (bk[j] < 0) {
          lo[j] = hi[j] = 0;
          continue;
        }
        lo[j] = dir[bk[j]];
        hi[j] = dir[bk[j] + 1];
        __builtin_prefetch(keys + lo[j]);
      }
      for (int j = 0; j < g; ++j)
        out[i0 + j] = bk[j] < 0 ? -1 : search_bucket(keys, lo[j], hi[j], ids[i0 + j]);
    }
  }
  std::free(dir);
  return 0;
}
