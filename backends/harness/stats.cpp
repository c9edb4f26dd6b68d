#include "backends/harness/stats.hpp"

#include <algorithm>

namespace kevolve::harness {

static double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double f = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - f) + sorted[hi] * f;
}

Timing summarize(std::vector<double> s, int threads) {
  Timing t;
  std::sort(s.begin(), s.end());
  t.samples = static_cast<int64_t>(s.size());
  t.median_ms = quantile(s, 0.5) / 1e6;
  t.p10_ms = quantile(s, 0.1) / 1e6;
  t.p90_ms = quantile(s, 0.9) / 1e6;
  t.threads = threads;
  return t;
}

double median(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  return quantile(s, 0.5);
}

}  // namespace kevolve::harness
