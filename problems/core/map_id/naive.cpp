// map_id, naive: one binary search over keys per id.
#include "kevolve_kernel.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t* keys = static_cast<const int64_t*>(a->inputs[0].data);
  const int64_t* ids = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* out = static_cast<int64_t*>(a->outputs[0].data);
  const int64_t K = a->inputs[0].shape[0], N = a->inputs[1].shape[0];
  for (int64_t i = 0; i < N; ++i) {
    const int64_t v = ids[i];
    int64_t lo = 0, hi = K;  // first index with keys[index] >= v
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    out[i] = (lo < K && keys[lo] == v) ? lo : -1;
  }
  return 0;
}
