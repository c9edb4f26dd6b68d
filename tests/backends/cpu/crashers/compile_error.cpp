// Crasher: does not compile.
#include "kevolve_kernel.h"
extern "C" int kevolve_kernel(const kv_args* a) { return undefined_variable + a->n_inputs; }
