// fm_interaction, naive: per batch row and embedding dim, scalar sums over the fields (double).
#include "kevolve_kernel.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* e = static_cast<const float*>(a->inputs[0].data);
  float* out = static_cast<float*>(a->outputs[0].data);
  const int64_t B = a->inputs[0].shape[0], F = a->inputs[0].shape[1], D = a->inputs[0].shape[2];
  for (int64_t b = 0; b < B; ++b) {
    double total = 0;
    for (int64_t d = 0; d < D; ++d) {
      double s = 0, q = 0;
      for (int64_t f = 0; f < F; ++f) {
        const double v = e[(b * F + f) * D + d];
        s += v;
        q += v * v;
      }
      total += s * s - q;
    }
    out[b] = float(0.5 * total);
  }
  return 0;
}
