// rmsnorm_bwd_bf16, naive: one row at a time, scalar loops, double accumulators; bfloat16 data
// (uint16_t bits), one round-to-nearest-even conversion per output.
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
  const uint16_t* w = static_cast<const uint16_t*>(a->inputs[1].data);
  const uint16_t* dy = static_cast<const uint16_t*>(a->inputs[2].data);
  uint16_t* dx = static_cast<uint16_t*>(a->outputs[0].data);
  uint16_t* dw = static_cast<uint16_t*>(a->outputs[1].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  std::vector<double> dwacc(H, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0, c = 0;
    for (int64_t h = 0; h < H; ++h) {
      const double xv = bf16_to_float(x[t * H + h]), gv = bf16_to_float(dy[t * H + h]);
      ss += xv * xv;
      c += double(bf16_to_float(w[h])) * gv * xv;
    }
    const double rstd = 1.0 / std::sqrt(ss / H + eps);
    const double k = rstd * rstd * rstd / H * c;
    for (int64_t h = 0; h < H; ++h) {
      const double xv = bf16_to_float(x[t * H + h]), gv = bf16_to_float(dy[t * H + h]);
      dx[t * H + h] = float_to_bf16(float(rstd * bf16_to_float(w[h]) * gv - xv * k));
      dwacc[h] += gv * xv * rstd;
    }
  }
  for (int64_t h = 0; h < H; ++h) dw[h] = float_to_bf16(float(dwacc[h]));
  return 0;
}
