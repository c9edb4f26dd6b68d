// Crasher: never returns.
#include "kevolve_kernel.h"
extern "C" int kevolve_kernel(const kv_args* a) {
  volatile int64_t i = 0;
  for (;;) i = i + a->n_inputs;
}
