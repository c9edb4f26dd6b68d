// Cheater (timed_outputs): correct on buffers it has not seen; once buffers come back (as they do
// when the harness times them) it writes zeros, which is fast. Caught by verifying timed outputs.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <set>

static void softmax(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(x[r * C + c]) - m);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float(std::exp(double(x[r * C + c]) - m) / s);
  }
}

static std::set<void*> seen;

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  if (!seen.insert(y).second) {
    for (int64_t i = 0; i < R * C; ++i) y[i] = 0.0f;
    return 0;
  }
  softmax(x, y, R, C);
  return 0;
}
