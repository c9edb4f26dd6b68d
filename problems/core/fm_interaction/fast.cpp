// fm_interaction, fast: batch rows split over OpenMP threads. Uses
//   out[b] = 0.5 * (sum_d s_d^2 - sum_{f,d} e^2),  s_d = sum_f e[b,f,d]
// so each row is read once, contiguously: per field, a vectorised pass over d updates the column
// sums s (float; a small block of D kept in registers/L1) and a vector sum of squares (double);
// then one vectorised pass over s. D is processed in chunks of kChunk, so any D works with a fixed
// stack buffer. The two totals nearly cancel, hence the double accumulators.
#include "kevolve_kernel.h"

namespace {
constexpr int64_t kChunk = 256;
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* __restrict e = static_cast<const float*>(a->inputs[0].data);
  float* __restrict out = static_cast<float*>(a->outputs[0].data);
  const int64_t B = a->inputs[0].shape[0], F = a->inputs[0].shape[1], D = a->inputs[0].shape[2];
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < B; ++b) {
    const float* __restrict eb = e + b * F * D;
    double sq = 0.0, ss = 0.0;
    for (int64_t d0 = 0; d0 < D; d0 += kChunk) {
      const int64_t n = D - d0 < kChunk ? D - d0 : kChunk;
      alignas(64) float s[kChunk];
#pragma omp simd
      for (int64_t d = 0; d < n; ++d) s[d] = 0.f;
      for (int64_t f = 0; f < F; ++f) {
        const float* __restrict row = eb + f * D + d0;
#pragma omp simd reduction(+ : sq)
        for (int64_t d = 0; d < n; ++d) {
          const float v = row[d];
          s[d] += v;
          sq += double(v * v);
        }
      }
#pragma omp simd reduction(+ : ss)
      for (int64_t d = 0; d < n; ++d) ss += double(s[d] * s[d]);
    }
    out[b] = float(0.5 * (ss - sq));
  }
  return 0;
}
