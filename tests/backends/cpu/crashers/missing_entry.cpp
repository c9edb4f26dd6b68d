// Crasher: exports the wrong entry point.
#include "kevolve_kernel.h"
extern "C" int some_other_name(const kv_args*) { return 0; }
