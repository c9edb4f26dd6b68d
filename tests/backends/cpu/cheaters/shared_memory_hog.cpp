// Cheater (memory limit): maps 3 GiB of shared anonymous memory, which a data-segment limit does not
// count, and touches it; honest otherwise. Returns 9 when the mapping is refused, so the verdict shows
// that the runner's address-space limit held.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sys/mman.h>

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
  const size_t n = size_t(3) << 30;
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 9;
  for (size_t i = 0; i < n; i += 4096) static_cast<char*>(p)[i] = 1;
  munmap(p, n);
  softmax(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), a->inputs[0].shape[0],
          a->inputs[0].shape[1]);
  return 0;
}
