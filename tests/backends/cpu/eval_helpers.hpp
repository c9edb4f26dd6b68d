// Helpers for tests that evaluate candidate files with the real CPU backend (real g++, real worker).
#pragma once
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "backends/cpu/cpu_backend.hpp"
#include "runtime/config/problem_loader.hpp"

namespace kevolve::test {

// A source file of this checkout; KEVOLVE_TEST_SOURCE_DIR overrides where the checkout is (test binaries
// shipped to a GPU node in a bundle run against the node's copy of the tree).
inline std::string source_path(const std::string& rel) {
  const char* moved = std::getenv("KEVOLVE_TEST_SOURCE_DIR");
  return std::string(moved && *moved ? moved : KEVOLVE_SOURCE_DIR) + "/" + rel;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Quick timing settings: tests check verdicts, never speed.
inline EvalOptions quick_options() {
  EvalOptions o;
  o.min_time_s = 0.02;
  o.min_reps = 5;
  o.max_reps = 40;
  o.warmup = 2;
  o.call_timeout_s = 5;
  return o;
}

// One backend (one evaluator worker) shared by all tests of the binary, as a device actor would.
inline cpu::CpuBackend& backend() {
  static cpu::CpuBackend b(std::string(KEVOLVE_BIN_DIR) + "/kevolve-cpu-eval");
  return b;
}

inline EvalResult eval_file(const std::string& spec_rel, const std::string& candidate_rel,
                            const EvalOptions& o = quick_options()) {
  auto spec = load_problem(source_path(spec_rel));
  if (!spec) {
    EvalResult r;
    r.message = spec.error();
    return r;
  }
  Candidate c;
  c.source = read_file(source_path(candidate_rel));
  c.entry = spec->entry;
  return backend().evaluate_source(*spec, c, o);
}

}  // namespace kevolve::test
