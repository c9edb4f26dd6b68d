// EvalRequest: what a worker is asked to evaluate, with the knobs of verification and timing.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/records/evaluation.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct EvalOptions {
  int threads = 0;                 // threads for the candidate AND the reference; 0 = all cores of this machine
  int trials = 5;                  // verification trials per shape, each with fresh inputs (minimum 5)
  int warmup = 3;                  // untimed calls before timing
  int min_reps = 20;               // timed calls, at least ...
  int max_reps = 2000;             // ... and at most
  double min_time_s = 0.3;         // keep timing until this much time was measured (per side)
  double call_timeout_s = 20;      // wall-clock limit for one call of the candidate
  int64_t memory_limit_mb = 4096;  // candidate's data-segment limit above its start-up size
  int64_t cpu_limit_s = 600;       // candidate runner's CPU-time limit
  uint64_t seed = 1;               // base seed of all generated data
  int64_t rotate_bytes = 0;        // total bytes of the timing input rotation; 0 = twice the last-level cache
  std::string arch = "sm_90";      // CUDA: the device architecture candidates are built for (never PTX-only)
  DetectorSet detectors;
};

struct EvalRequest {
  ProblemSpec spec;
  std::string artifact;  // the candidate's shared object
  std::string entry;     // its entry point
  EvalOptions options;
};

}  // namespace kevolve
