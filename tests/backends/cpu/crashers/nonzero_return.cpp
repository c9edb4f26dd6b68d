// Crasher: reports failure through its return code.
#include "kevolve_kernel.h"
extern "C" int kevolve_kernel(const kv_args*) { return 7; }
