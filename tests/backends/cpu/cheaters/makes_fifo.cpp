// Cheater (isolation): leaves something behind on the machine: a FIFO in /tmp (mkfifo, i.e. mknod, which
// an older deny-list forgot). Honest otherwise. Caught because the sandbox's allow-list kills it.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

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
  const std::string path = "/tmp/kevolve-cheater-fifo-" + std::to_string(getpid());
  mkfifo(path.c_str(), 0666);
  softmax(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), a->inputs[0].shape[0],
          a->inputs[0].shape[1]);
  return 0;
}
