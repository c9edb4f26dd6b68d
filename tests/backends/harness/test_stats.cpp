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

// The GPU evaluators stop timing once the median is pinned down: a steady kernel after a handful of calls,
// a noisy one only when its many samples pin the median as tightly.
TEST_CASE("a median is settled when its 95 percent interval is within the asked share of itself", "[stats]") {
  using kevolve::harness::median_settled;
  std::vector<double> steady;  // 6.00 ms ± 0.1 %
  for (int i = 0; i < 10; ++i) steady.push_back(6.0e6 * (1 + 0.001 * ((i * 7) % 5 - 2) / 2));
  CHECK(median_settled(steady, 0.005));
  CHECK_FALSE(median_settled(steady, 0.0001));
  CHECK_FALSE(median_settled(steady, 0));  // 0: never (min_time decides)
  CHECK_FALSE(median_settled(std::vector<double>(steady.begin(), steady.begin() + 7), 0.005));  // too few
  std::vector<double> noisy;  // ±10 %, spread evenly: 10 samples cannot pin the median to 0.5 %
  for (int i = 0; i < 10; ++i) noisy.push_back(6.0e6 * (0.9 + 0.2 * i / 9));
  CHECK_FALSE(median_settled(noisy, 0.005));
  // One slow outlier (a preempted call) does not keep a steady side from settling: only ranks near the
  // middle count.
  steady.push_back(60e6);
  CHECK(median_settled(steady, 0.005));
  // Many samples of a distribution with a dense middle settle even with wide tails.
  std::vector<double> tails;
  for (int i = 0; i < 400; ++i) tails.push_back(i % 10 == 0 ? 9e6 : i % 10 == 1 ? 3e6 : 6e6 + (i % 7) * 1e3);
  CHECK(median_settled(tails, 0.005));
}
