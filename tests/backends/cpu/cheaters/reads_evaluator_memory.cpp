// Cheater (the runner's identity): opens its parent's memory, /proc/<ppid>/mem, where the evaluator keeps
// the expected outputs (a real attack then searches it for them and copies them out). As root, in a
// runner that shares the evaluator's identity, the file opens; as "nobody" it does not. The kernel
// computes honestly and returns 7 when the parent's memory is out of reach, so the verdict shows which.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <fcntl.h>
#include <string>
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
  const std::string mem = "/proc/" + std::to_string(getppid()) + "/mem";
  const int fd = open(mem.c_str(), O_RDONLY);
  if (fd < 0) return 7;
  close(fd);
  softmax(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), a->inputs[0].shape[0],
          a->inputs[0].shape[1]);
  return 0;
}
