// rmsnorm_fwd, naive: one row at a time, scalar loops.
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  const float* w = static_cast<const float*>(a->inputs[1].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0;
    for (int64_t h = 0; h < H; ++h) ss += double(x[t * H + h]) * x[t * H + h];
    const float r = float(1.0 / std::sqrt(ss / H + eps));
    for (int64_t h = 0; h < H; ++h) y[t * H + h] = x[t * H + h] * r * w[h];
  }
  return 0;
}
