// Buggy kernel: does not normalise by the row sum.
#include "kevolve_kernel.h"
#include <cmath>
extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t n = a->inputs[0].shape[0] * a->inputs[0].shape[1];
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]) / 1000.0f;
  return 0;
}
