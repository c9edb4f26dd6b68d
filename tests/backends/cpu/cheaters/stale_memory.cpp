// Cheater (fresh_data): keeps its previous result in a leftover buffer and returns it whenever the
// size matches, without looking at the inputs — right only if every call sees the same data.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

static void softmax(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(x[r * C + c]) - m);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float(std::exp(double(x[r * C + c]) - m) / s);
  }
}

static std::vector<float> leftover;

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  if (int64_t(leftover.size()) == R * C) {
    std::memcpy(y, leftover.data(), sizeof(float) * R * C);
    return 0;
  }
  softmax(x, y, R, C);
  leftover.assign(y, y + R * C);
  return 0;
}
