// Incorrect on purpose: softmax over each row, but the vector loop's step of 8 leaves the last C % 8
// columns of every row at 0 (the tail is not handled). Correct where C is a multiple of 8.
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  const int64_t body = C - C % 8;
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = std::fmax(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(xr[c]) - m);
    for (int64_t c = 0; c < body; c += 8)
      for (int k = 0; k < 8; ++k) yr[c + k] = float(std::exp(double(xr[c + k]) - m) / s);
    for (int64_t c = body; c < C; ++c) yr[c] = 0.0f;
  }
  return 0;
}
