// softmax_rows_bf16, naive: one row at a time, three scalar passes (max; exp and sum; normalise);
// bfloat16 data (uint16_t bits), float/double math, one round-to-nearest-even conversion per output.
#include "kevolve_kernel.h"
#include <cmath>
#include <cstring>
#include <vector>

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
  uint16_t* y = static_cast<uint16_t*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  std::vector<float> e(static_cast<size_t>(C));
  for (int64_t r = 0; r < R; ++r) {
    float m = bf16_to_float(x[r * C]);
    for (int64_t c = 1; c < C; ++c) {
      const float v = bf16_to_float(x[r * C + c]);
      if (v > m) m = v;
    }
    double s = 0;
    for (int64_t c = 0; c < C; ++c) {
      e[c] = std::exp(bf16_to_float(x[r * C + c]) - m);
      s += e[c];
    }
    const float inv = float(1.0 / s);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float_to_bf16(e[c] * inv);
  }
  return 0;
}
