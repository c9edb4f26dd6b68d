// Honest: softmax over each row, computed on every call (one thread).
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(xr[c]) - m);
    for (int64_t c = 0; c < C; ++c) yr[c] = float(std::exp(double(xr[c]) - m) / s);
  }
  return 0;
}
