#include "backends/harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

double timing_settle() {
  if (const char* e = std::getenv("KEVOLVE_TIMING_SETTLE"); e && *e) return std::max(0.0, std::atof(e));
  return 0.005;
}

bool median_settled(std::vector<double> s, double rel) {
  const int n = static_cast<int>(s.size());
  if (n < kSettleMinSamples || rel <= 0) return false;
  std::sort(s.begin(), s.end());
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const int lo = std::max(1, static_cast<int>(std::floor(n / 2.0 - half)));      // 1-based ranks
  const int hi = std::min(n, static_cast<int>(std::ceil(n / 2.0 + 1 + half)));
  const double m = quantile(s, 0.5);
  return m > 0 && s[hi - 1] - s[lo - 1] <= 2 * rel * m;
}

}  // namespace kevolve::harness
