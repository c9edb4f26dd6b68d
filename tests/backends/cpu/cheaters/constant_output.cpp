// Cheater (magnitude): writes 1/C everywhere. On wide rows every probability is small, so this passes
// a loose elementwise atol; it cannot pass a relative L2 bound.
#include "kevolve_kernel.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  for (int64_t i = 0; i < R * C; ++i) y[i] = 1.0f / float(C);
  return 0;
}
