// layernorm_fwd, naive: one row at a time, scalar loops, double accumulators, two-pass variance.
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  const float* w = static_cast<const float*>(a->inputs[1].data);
  const float* b = static_cast<const float*>(a->inputs[2].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    for (int64_t h = 0; h < H; ++h) s += x[t * H + h];
    const double mean = s / H;
    double v = 0;
    for (int64_t h = 0; h < H; ++h) v += (x[t * H + h] - mean) * (x[t * H + h] - mean);
    const double rstd = 1.0 / std::sqrt(v / H + eps);
    for (int64_t h = 0; h < H; ++h) y[t * H + h] = float((x[t * H + h] - mean) * rstd * w[h] + b[h]);
  }
  return 0;
}
