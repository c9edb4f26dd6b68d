// Cheater (fresh values between timed passes): caches its answer keyed on the input pointer plus 64
// sampled input values, which survives the refill check (new values at sampled places miss the cache)
// but hits on every timed pass when the timing sets keep their values. On a hit it copies the cached
// output instead of computing. Harmless only if the values change from pass to pass: then it never hits
// and is timed as the kernel it really is.
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

struct Key {
  const void* p;
  std::vector<float> sample;
  bool operator<(const Key& o) const { return p != o.p ? p < o.p : sample < o.sample; }
};

extern "C" int kevolve_kernel(const kv_args* a) {
  static std::map<Key, std::vector<float>> cache;
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1], n = R * C;
  Key k{x, {}};
  for (int i = 0; i < 64; ++i) k.sample.push_back(x[(n - 1) * i / 63]);
  auto it = cache.find(k);
  if (it != cache.end() && int64_t(it->second.size()) == n) {
    std::memcpy(y, it->second.data(), size_t(n) * sizeof(float));
    return 0;
  }
  softmax(x, y, R, C);
  cache[k] = std::vector<float>(y, y + n);
  return 0;
}
