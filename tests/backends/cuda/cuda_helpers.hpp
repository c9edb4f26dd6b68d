// Helpers for the CUDA backend tests: the real build step (kevolve-nvrtc, nvcc) and, where a GPU and a
// built worker exist, the real kevolve-cuda-eval. Tests that need a device skip with a printed reason.
#pragma once
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "tests/test_support/skip.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "runtime/config/problem_loader.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"

namespace kevolve::test {

// The CUDA worker under test: $KEVOLVE_CUDA_WORKER, else the one this build made.
inline std::string cuda_worker() {
  if (const char* p = std::getenv("KEVOLVE_CUDA_WORKER"); p && *p) return p;
  return std::string(KEVOLVE_BIN_DIR) + "/kevolve-cuda-eval";
}

// Why GPU tests cannot run here ("" when they can).
inline std::string no_gpu_reason() {
  struct stat st {};
  if (stat("/dev/nvidiactl", &st) != 0 && stat("/dev/nvidia0", &st) != 0) return "no NVIDIA device on this machine";
  if (!std::filesystem::exists(cuda_worker()))
    return "no CUDA worker at " + cuda_worker() +
           " (build it with tools/build_cuda_worker.sh, or set KEVOLVE_CUDA_WORKER)";
  return "";
}

// True (after printing why) when the calling test must skip.
inline bool skip_without_gpu(const char* test) {
  const std::string why = no_gpu_reason();
  if (why.empty()) return false;
  kevolve::test::say_skipped(std::string(test) + ": " + why);
  return true;
}

inline cuda::CudaBackend& cuda_backend() {
  static cuda::CudaBackend b(cuda_worker());
  return b;
}

// Evaluates CUDA `source` against `spec` (a loaded problem, its shapes possibly changed by the test).
inline EvalResult cuda_eval_spec(const ProblemSpec& spec, const std::string& source, EvalOptions o = quick_options()) {
  Candidate c;
  c.language = "cuda";
  c.source = source;
  c.entry = spec.entry;
  return cuda_backend().evaluate_source(spec, c, o);
}

// Evaluates CUDA `source` against the problem at `spec_rel` (relative to the source tree).
inline EvalResult cuda_eval_source(const std::string& spec_rel, const std::string& source,
                                   EvalOptions o = quick_options()) {
  auto spec = load_problem(source_path(spec_rel));
  if (!spec) throw std::runtime_error(spec.error());
  return cuda_eval_spec(*spec, source, o);
}

inline EvalResult cuda_eval_file(const std::string& spec_rel, const std::string& candidate_rel,
                                 EvalOptions o = quick_options()) {
  return cuda_eval_source(spec_rel, read_file(source_path(candidate_rel)), o);
}

}  // namespace kevolve::test
