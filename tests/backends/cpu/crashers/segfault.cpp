// Crasher: writes through a null pointer.
#include "kevolve_kernel.h"
extern "C" int kevolve_kernel(const kv_args* a) {
  volatile float* p = nullptr;
  *p = static_cast<const float*>(a->inputs[0].data)[0];
  return 0;
}
