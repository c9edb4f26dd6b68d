// Crasher: aborts.
#include "kevolve_kernel.h"
#include <cstdlib>
extern "C" int kevolve_kernel(const kv_args*) { std::abort(); }
