#include <catch2/catch.hpp>

#include "backends/harness/cache_size.hpp"

using namespace kevolve::harness;

TEST_CASE("an AMD L3 reported as the whole socket's is bounded by what one CCD holds", "[cache]") {
  // A 2-core VM on an EPYC reports the socket's 508 MiB: the timing would rotate 1 GiB for a 96 MiB cache.
  CHECK(reachable_llc_bytes(int64_t(508) << 20, true) == kAmdCcdL3Max);
  // A real CCD's L3 (32 MiB, 96 MiB with V-Cache) stands.
  CHECK(reachable_llc_bytes(int64_t(32) << 20, true) == int64_t(32) << 20);
  CHECK(reachable_llc_bytes(int64_t(96) << 20, true) == int64_t(96) << 20);
}

TEST_CASE("an Intel L3 is shared by the socket and stands as reported", "[cache]") {
  CHECK(reachable_llc_bytes(int64_t(320) << 20, false) == int64_t(320) << 20);
}

TEST_CASE("an unknown cache size gives 32 MiB", "[cache]") {
  CHECK(reachable_llc_bytes(0, false) == int64_t(32) << 20);
  CHECK(reachable_llc_bytes(-1, true) == int64_t(32) << 20);
}

TEST_CASE("this machine's last-level cache is a size the timing can rotate through", "[cache]") {
  const int64_t b = last_level_cache_bytes();
  CHECK(b >= int64_t(1) << 20);
  CHECK(b <= int64_t(4) << 30);
}
