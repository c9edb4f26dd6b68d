// rmsnorm_bwd, fast: rows split over OpenMP threads. Per row, one vectorised pass computes both
// sum(x^2) and sum(w*dy*x); a second pass (row still in L1/L2) writes dx and accumulates dweight
// into a per-thread float partial; the partials are summed at the end (parallel over h).
#include "kevolve_kernel.h"
#include <cmath>
#include <cstdlib>
#include <omp.h>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* __restrict x = static_cast<const float*>(a->inputs[0].data);
  const float* __restrict w = static_cast<const float*>(a->inputs[1].data);
  const float* __restrict dy = static_cast<const float*>(a->inputs[2].data);
  float* __restrict dx = static_cast<float*>(a->outputs[0].data);
  float* __restrict dw = static_cast<float*>(a->outputs[1].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  const int nt = omp_get_max_threads();
  // Row stride of the partials padded to a multiple of 16 floats (64 bytes) to avoid false sharing.
  const int64_t Hp = (H + 15) & ~int64_t(15);
  float* part = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * size_t(Hp) * nt + 64));
  if (!part) return 1;
  int used = 1;
#pragma omp parallel
  {
    const int tid = omp_get_thread_num();
#pragma omp single
    used = omp_get_num_threads();
    float* __restrict acc = part + int64_t(tid) * Hp;
#pragma omp simd
    for (int64_t h = 0; h < H; ++h) acc[h] = 0.f;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      const float* __restrict xr = x + t * H;
      const float* __restrict gr = dy + t * H;
      float* __restrict dxr = dx + t * H;
      float ss = 0.f, c = 0.f;
#pragma omp simd reduction(+ : ss, c)
      for (int64_t h = 0; h < H; ++h) {
        ss += xr[h] * xr[h];
        c += w[h] * gr[h] * xr[h];
      }
      const double rs = 1.0 / std::sqrt(double(ss) / double(H) + eps);
      const float rstd = float(rs);
      const float k = float(rs * rs * rs / double(H) * double(c));
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) {
        dxr[h] = rstd * (w[h] * gr[h]) - xr[h] * k;
        acc[h] += gr[h] * xr[h] * rstd;
      }
    }
    // implicit barrier above; reduce the per-thread partials
#pragma omp for schedule(static)
    for (int64_t h = 0; h < H; ++h) {
      float s = 0.f;
      for (int i = 0; i < used; ++i) s += part[int64_t(i) * Hp + h];
      dw[h] = s;
    }
  }
  std::free(part);
  return 0;
}
