// Sandbox probe: when its library is loaded (before any call), starts a process that leaves the runner's
// session (glibc's daemon(): a fork, then setsid) and spins under the name "kvdaemonspin", so as to slow
// the reference while the runner is paused. No token the source scan knows; the seccomp filter, in force
// before the library is loaded, kills the runner at the fork (SIGSYS), and nothing is left running.
#include "kevolve_kernel.h"
#include <sys/prctl.h>
#include <unistd.h>

static int started = [] {
  if (daemon(1, 1) == 0) {  // only the new process returns here
    prctl(PR_SET_NAME, "kvdaemonspin");
    volatile unsigned long i = 0;
    for (;;) i = i + 1;
  }
  return 0;
}();

extern "C" int kevolve_kernel(const kv_args*) { return started; }
