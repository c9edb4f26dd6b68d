// Nsight Compute feedback for one kernel-only CUDA candidate: runs `ncu` (clock control off, as the card is
// found) around `kevolve eval --backend cuda` and keeps what a kernel author reads first — DRAM throughput
// as a share of peak, achieved occupancy, warp stall reasons. Used for the top candidates of a search
// (it replays the kernel and takes seconds). Says why when ncu is missing or cannot read the counters.
#pragma once
#include <string>

#include "runtime/records/eval_request.hpp"

namespace kevolve::cuda {

// `source`: the candidate (kernel-only: its `@kevolve kernel` is profiled); `kevolve`: the kevolve binary.
// Returns a short report, or a line starting "unavailable:".
std::string nsight_profile(const ProblemSpec& spec, const std::string& source, const EvalOptions& o,
                           const std::string& kevolve);

// The readable summary of ncu's --csv output (exposed for tests).
std::string summarize_ncu_csv(const std::string& csv);

}  // namespace kevolve::cuda
