#include "backends/harness/cache_size.hpp"

#include <algorithm>
#include <unistd.h>

namespace kevolve::harness {

int64_t reachable_llc_bytes(int64_t reported, bool amd) {
  if (reported <= 0) return int64_t(32) << 20;
  return amd ? std::min(reported, kAmdCcdL3Max) : reported;
}

int64_t last_level_cache_bytes() {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) l3 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool amd = __builtin_cpu_is("amd");
#else
  const bool amd = false;
#endif
  return reachable_llc_bytes(l3, amd);
}

}  // namespace kevolve::harness
