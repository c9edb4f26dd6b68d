// Cheater (the runner's view of the machine): lists /proc for processes of another user — the evaluator,
// the node, anything whose command line or files could leak a secret or the expected outputs. In a runner
// with a /proc of its own that hides other users' processes it sees none; otherwise it sees the machine.
// The kernel computes honestly and returns 8 when it sees one, so the verdict shows which.
#include "kevolve_kernel.h"
#include <algorithm>
#include <cctype>
#include <cmath>
#include <dirent.h>
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
  int others = 0;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      struct stat st;
      if (std::isdigit(static_cast<unsigned char>(e->d_name[0])) &&
          stat((std::string("/proc/") + e->d_name).c_str(), &st) == 0 && st.st_uid != geteuid())
        ++others;
    }
    closedir(d);
  }
  // The evaluator itself: its parent.
  struct stat parent;
  if (stat(("/proc/" + std::to_string(getppid())).c_str(), &parent) == 0) ++others;
  if (others > 0) return 8;
  softmax(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), a->inputs[0].shape[0],
          a->inputs[0].shape[1]);
  return 0;
}
