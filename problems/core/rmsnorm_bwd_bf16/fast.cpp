// rmsnorm_bwd_bf16, fast: rows split over OpenMP threads. Per row, one vectorised pass (bfloat16
// widened to float by a shift) computes both sum(x^2) and sum(w*dy*x); a second pass writes dx
// (rounded to bfloat16 with integer arithmetic, round to nearest even; the values are finite) and
// accumulates dweight into a per-thread float partial; the partials are summed in double at the end
// (parallel over h) and rounded once.
#include "kevolve_kernel.h"
#include <cmath>
#include <cstdlib>
#include <omp.h>

namespace {
inline float bf16_to_float(uint16_t h) { return __builtin_bit_cast(float, uint32_t(h) << 16); }
inline uint16_t float_to_bf16(float f) {
  const uint32_t u = __builtin_bit_cast(uint32_t, f);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const uint16_t* __restrict x = static_cast<const uint16_t*>(a->inputs[0].data);
  const uint16_t* __restrict w = static_cast<const uint16_t*>(a->inputs[1].data);
  const uint16_t* __restrict dy = static_cast<const uint16_t*>(a->inputs[2].data);
  uint16_t* __restrict dx = static_cast<uint16_t*>(a->outputs[0].data);
  uint16_t* __restrict dw = static_cast<uint16_t*>(a->outputs[1].data);
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
      const uint16_t* __restrict xr = x + t * H;
      const uint16_t* __restrict gr = dy + t * H;
      uint16_t* __restrict dxr = dx + t * H;
      float ss = 0.f, c = 0.f;
#pragma omp simd reduction(+ : ss, c)
      for (int64_t h = 0; h < H; ++h) {
        const float xv = bf16_to_float(xr[h]);
        ss += xv * xv;
        c += bf16_to_float(w[h]) * bf16_to_float(gr[h]) * xv;
      }
      const double rs = 1.0 / std::sqrt(double(ss) / double(H) + eps);
      const float rstd = float(rs);
      const float k = float(rs * rs * rs / double(H) * double(c));
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) {
        const float xv = bf16_to_float(xr[h]), gv = bf16_to_float(gr[h]);
        dxr[h] = float_to_bf16(rstd * (bf16_to_float(w[h]) * gv) - xv * k);
        acc[h] += gv * xv * rstd;
      }
    }
    // implicit barrier above; reduce the per-thread partials
#pragma omp for schedule(static)
    for (int64_t h = 0; h < H; ++h) {
      double s = 0.0;
      for (int i = 0; i < used; ++i) s += part[int64_t(i) * Hp + h];
      dw[h] = float_to_bf16(float(s));
    }
  }
  std::free(part);
  return 0;
}
