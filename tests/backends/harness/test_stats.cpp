#include <catch2/catch.hpp>

#include "backends/harness/stats.hpp"

TEST_CASE("summaries give median, p10 and p90 in milliseconds", "[stats]") {
  std::vector<double> ns;
  for (int i = 1; i <= 11; ++i) ns.push_back(i * 1e6);  // 1..11 ms, shuffled order does not matter
  std::swap(ns[0], ns[10]);
  auto t = kevolve::harness::summarize(ns, 4);
  CHECK(t.median_ms == Approx(6));
  CHECK(t.p10_ms == Approx(2));
  CHECK(t.p90_ms == Approx(10));
  CHECK(t.samples == 11);
  CHECK(t.threads == 4);
  CHECK(kevolve::harness::summarize({}, 1).samples == 0);
}
