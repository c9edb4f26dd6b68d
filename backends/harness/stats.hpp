// Summary statistics of timing samples (median, p10, p90), shared by every backend.
#pragma once
#include <vector>

#include "runtime/records/evaluation.hpp"

namespace kevolve::harness {

// Samples in nanoseconds; returns milliseconds. Empty input gives zeros.
Timing summarize(std::vector<double> samples_ns, int threads);

// The median of `samples` (any unit); 0 for none.
double median(std::vector<double> samples);

// Whether the median of `samples` is known to within ±rel of itself: its distribution-free 95 % interval, the
// order statistics of ranks n/2 ∓ 0.98·√n (1-based, rounded outwards), spans at most 2·rel·median. False for
// fewer than kSettleMinSamples samples or rel <= 0. The GPU evaluators stop timing a side once this holds
// (and at least min_reps were taken) instead of always filling min_time: docs/evaluation.md, "Timing".
inline constexpr int kSettleMinSamples = 8;
bool median_settled(std::vector<double> samples, double rel);

// The share the GPU evaluators settle timing to: $KEVOLVE_TIMING_SETTLE (0 turns settling off, so min_time
// alone decides, as before), else 0.005.
double timing_settle();

}  // namespace kevolve::harness
