// rmsnorm_fwd, fast: rows split over OpenMP threads; per row one vectorised sum-of-squares pass
// (float SIMD accumulator) and one fused scale pass while the row is still in L1/L2.
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* __restrict x = static_cast<const float*>(a->inputs[0].data);
  const float* __restrict w = static_cast<const float*>(a->inputs[1].data);
  float* __restrict y = static_cast<float*>(a->outputs[0].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t) {
    const float* __restrict xr = x + t * H;
    float* __restrict yr = y + t * H;
    float ss = 0.f;
#pragma omp simd reduction(+ : ss)
    for (int64_t h = 0; h < H; ++h) ss += xr[h] * xr[h];
    const float r = float(1.0 / std::sqrt(double(ss) / double(H) + eps));
#pragma omp simd
    for (int64_t h = 0; h < H; ++h) yr[h] = xr[h] * r * w[h];
  }
  return 0;
}
