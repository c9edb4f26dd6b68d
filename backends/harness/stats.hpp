// Summary statistics of timing samples (median, p10, p90), shared by every backend.
#pragma once
#include <vector>

#include "runtime/records/evaluation.hpp"

namespace kevolve::harness {

// Samples in nanoseconds; returns milliseconds. Empty input gives zeros.
Timing summarize(std::vector<double> samples_ns, int threads);

// The median of `samples` (any unit); 0 for none.
double median(std::vector<double> samples);

}  // namespace kevolve::harness
