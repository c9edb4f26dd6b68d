// rmsnorm_fwd_bf16, naive: one row at a time, scalar loops; bfloat16 data (uint16_t bits), float
// math with a double sum of squares, one round-to-nearest-even conversion per output.
#include "kevolve_kernel.h"
#include <cmath>
#include <cstring>

namespace {
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                          // round to nearest even
  return uint16_t(u >> 16);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const uint16_t* x = static_cast<const uint16_t*>(a->inputs[0].data);
  const uint16_t* w = static_cast<const uint16_t*>(a->inputs[1].data);
  uint16_t* y = static_cast<uint16_t*>(a->outputs[0].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0;
    for (int64_t h = 0; h < H; ++h) {
      const double v = bf16_to_float(x[t * H + h]);
      ss += v * v;
    }
    const float r = float(1.0 / std::sqrt(ss / H + eps));
    for (int64_t h = 0; h < H; ++h) y[t * H + h] = float_to_bf16(bf16_to_float(x[t * H + h]) * r * bf16_to_float(w[h]));
  }
  return 0;
}
