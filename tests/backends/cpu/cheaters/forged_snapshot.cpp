// Cheater (escaped work with forged evidence): returns at once; a thread computes the softmax after the
// return and then writes the same values over the runner's snapshot of the outputs, which lies right
// behind the outputs in the shared arena, so the snapshot comparison sees nothing. Caught because the
// evaluator's own clock over each timed pass includes the time the runner spent waiting for that thread.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

static void softmax(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(x[r * C + c]) - m);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float(std::exp(double(x[r * C + c]) - m) / s);
  }
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  std::thread([=] {
    softmax(x, y, R, C);
    // The arena places each output's snapshot right after it, at the next 4 KiB page.
    const size_t bytes = size_t(R * C) * sizeof(float);
    float* snapshot = reinterpret_cast<float*>(reinterpret_cast<char*>(y) + ((bytes + 4095) / 4096) * 4096);
    std::memcpy(snapshot, y, bytes);
  }).detach();
  return 0;
}
