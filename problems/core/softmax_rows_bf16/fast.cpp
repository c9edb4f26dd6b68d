// softmax_rows_bf16, fast: rows split over OpenMP threads. Per row: a vectorised max pass over the
// widened bfloat16 values, one fused pass that evaluates exp(x - max) with a branch-free, vectorisable
// expf (Cody-Waite range reduction + Cephes minimax polynomial, ~1 ulp) into a float row buffer and
// accumulates the sum, then a scale pass that rounds to bfloat16 (round to nearest even; the values
// are finite). No libm calls in the hot loops.
#include "kevolve_kernel.h"
#include <cmath>
#include <cstdlib>

namespace {
inline float bf16_to_float(uint16_t h) { return __builtin_bit_cast(float, uint32_t(h) << 16); }
inline uint16_t float_to_bf16(float f) {
  const uint32_t u = __builtin_bit_cast(uint32_t, f);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// exp(x) for x <= ~88; returns 0 below the smallest normal float (x < -87.33).
#pragma omp declare simd notinbranch
inline float vexp(float x) {
  const float lo = -87.33654f;
  const bool under = x < lo;
  x = under ? lo : x;
  const float kf = x * 1.44269504088896341f;
  const float n = (kf + 12582912.0f) - 12582912.0f;  // round to nearest (|kf| < 2^22)
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const int e = (int(n) + 127) << 23;
  const float scale = __builtin_bit_cast(float, e);
  return under ? 0.0f : p * scale;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const uint16_t* __restrict x = static_cast<const uint16_t*>(a->inputs[0].data);
  uint16_t* __restrict y = static_cast<uint16_t*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  int status = 0;
#pragma omp parallel
  {
    float* e = static_cast<float*>(std::malloc(sizeof(float) * size_t(C > 0 ? C : 1)));
    if (!e) {
#pragma omp atomic write
      status = 1;
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < R; ++r) {
      if (!e) continue;
      const uint16_t* __restrict xr = x + r * C;
      uint16_t* __restrict yr = y + r * C;
      float m = -INFINITY;
#pragma omp simd reduction(max : m)
      for (int64_t c = 0; c < C; ++c) {
        const float v = bf16_to_float(xr[c]);
        m = v > m ? v : m;
      }
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t c = 0; c < C; ++c) {
        e[c] = vexp(bf16_to_float(xr[c]) - m);
        s += e[c];
      }
      const float inv = 1.0f / s;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) yr[c] = float_to_bf16(e[c] * inv);
    }
    std::free(e);
  }
  return status;
}
