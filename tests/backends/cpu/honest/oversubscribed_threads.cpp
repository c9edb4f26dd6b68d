// Honest kernel: asks OpenMP for 8 threads whatever the machine has. The extra pool threads outlive
// the call; that is not escaped work and must not be rejected.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
#pragma omp parallel for num_threads(8)
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(x[r * C + c]) - m);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float(std::exp(double(x[r * C + c]) - m) / s);
  }
  return 0;
}
