// rmsnorm_bwd, naive: one row at a time, scalar loops, double accumulators.
#include "kevolve_kernel.h"
#include <cmath>
#include <vector>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  const float* w = static_cast<const float*>(a->inputs[1].data);
  const float* dy = static_cast<const float*>(a->inputs[2].data);
  float* dx = static_cast<float*>(a->outputs[0].data);
  float* dw = static_cast<float*>(a->outputs[1].data);
  const int64_t T = a->inputs[0].shape[0], H = a->inputs[0].shape[1];
  const double eps = a->params[0];
  std::vector<double> dwacc(H, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0;
    for (int64_t h = 0; h < H; ++h) ss += double(x[t * H + h]) * x[t * H + h];
    const double rstd = 1.0 / std::sqrt(ss / H + eps);
    double c = 0;
    for (int64_t h = 0; h < H; ++h) c += double(w[h]) * dy[t * H + h] * x[t * H + h];
    const double k = rstd * rstd * rstd / H * c;
    for (int64_t h = 0; h < H; ++h) {
      dx[t * H + h] = float(rstd * w[h] * dy[t * H + h] - x[t * H + h] * k);
      dwacc[h] += double(dy[t * H + h]) * x[t * H + h] * rstd;
    }
  }
  for (int64_t h = 0; h < H; ++h) dw[h] = float(dwacc[h]);
  return 0;
}
