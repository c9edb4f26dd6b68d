// merge_bucketized_dense, naive: one binary search (lower bound) per element, in row order.
#include "kevolve_kernel.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  const int64_t* offsets = static_cast<const int64_t*>(a->inputs[1].data);
  const float* bnd = static_cast<const float*>(a->inputs[2].data);
  int64_t* out = static_cast<int64_t*>(a->outputs[0].data);
  const int64_t B = a->inputs[0].shape[0], F = a->inputs[0].shape[1];
  for (int64_t b = 0; b < B; ++b) {
    int64_t base = 0;  // sum over g < f of (len_g + 1)
    for (int64_t f = 0; f < F; ++f) {
      const int64_t s = offsets[f], e = offsets[f + 1];
      const float v = x[b * F + f];
      int64_t lo = s, hi = e;  // first boundary >= v
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (bnd[mid] < v) lo = mid + 1;
        else hi = mid;
      }
      out[b * F + f] = (lo - s) + base;
      base += (e - s) + 1;
    }
  }
  return 0;
}
