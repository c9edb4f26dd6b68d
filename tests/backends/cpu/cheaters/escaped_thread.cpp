// Cheater (escaped_work): returns at once and computes the softmax 2 ms later on a detached thread,
// so the timer sees almost nothing. Caught because the outputs at return differ from the outputs later.
#include "kevolve_kernel.h"
#include <algorithm>
#include <chrono>
#include <cmath>
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
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    softmax(x, y, R, C);
  }).detach();
  return 0;
}
