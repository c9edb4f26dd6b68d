// softmax_rows, naive: one row at a time, three scalar passes (max, exp and sum, normalise).
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c)
      if (x[r * C + c] > m) m = x[r * C + c];
    double s = 0;
    for (int64_t c = 0; c < C; ++c) {
      y[r * C + c] = std::exp(x[r * C + c] - m);
      s += y[r * C + c];
    }
    const float inv = float(1.0 / s);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] *= inv;
  }
  return 0;
}
