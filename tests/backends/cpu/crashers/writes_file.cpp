// Sandbox probe: tries to open a file for writing (no token the source scan knows); seccomp kills it.
#include "kevolve_kernel.h"
#include <cstdio>
extern "C" int kevolve_kernel(const kv_args*) {
  FILE* f = std::fopen("/tmp/kevolve-sandbox-probe.txt", "w");
  if (f) { std::fputs("escaped", f); std::fclose(f); }
  return 0;
}
