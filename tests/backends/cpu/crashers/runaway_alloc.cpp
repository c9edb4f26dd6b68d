// Crasher: allocates (and touches) memory without bound until the allocation fails.
#include "kevolve_kernel.h"
#include <cstring>
#include <vector>
extern "C" int kevolve_kernel(const kv_args*) {
  std::vector<char*> hog;
  for (;;) {
    char* p = new char[64 << 20];
    std::memset(p, 1, 64 << 20);
    hog.push_back(p);
  }
}
