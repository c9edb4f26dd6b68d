// Cheater (isolation): starves the reference of CPU. It renices its parent, the evaluator that times the
// reference, to the lowest priority and pins it to one core, then computes honestly; a real attack adds
// threads that spin while the reference runs. Caught because changing another process's scheduling is
// refused by the sandbox (SIGSYS); as "nobody" it would be refused by the kernel too.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cmath>
#include <sched.h>
#include <sys/resource.h>
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
  setpriority(PRIO_PROCESS, static_cast<id_t>(getppid()), 19);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(getppid(), sizeof one, &one);
  softmax(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), a->inputs[0].shape[0],
          a->inputs[0].shape[1]);
  return 0;
}
