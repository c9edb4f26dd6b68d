// Cheater (pointer_reuse): caches each result keyed on the input pointer and replays it whenever the
// same buffer comes back, so repeated timing calls cost a memcpy. Caught by refilling the same buffers
// with new data.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
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

static std::map<const void*, std::vector<float>> cache;

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  auto it = cache.find(x);
  if (it != cache.end() && int64_t(it->second.size()) == R * C) {
    std::memcpy(y, it->second.data(), sizeof(float) * R * C);
    return 0;
  }
  softmax(x, y, R, C);
  cache[x].assign(y, y + R * C);
  return 0;
}
