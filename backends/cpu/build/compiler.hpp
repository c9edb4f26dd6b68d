// Builds a CPU candidate into a shared object with g++, in a private temporary folder. Every g++ run on
// candidate text is confined (backends/process/confined_build.hpp): the build is an untrusted step.
#pragma once
#include <string>
#include <vector>

#include "backends/process/confined_build.hpp"
#include "runtime/records/candidate.hpp"

namespace kevolve::cpu {

struct CompileOptions {
  std::string compiler = "g++";
  // -march=native: the evaluating machine's instruction set (the build runs where the candidate runs).
  std::vector<std::string> flags = {"-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=c++17", "-Wl,-z,now"};
  double timeout_s = 120;
  process::BuildLimits limits;
};

// Writes the candidate and the ABI header into `dir`, compiles `candidate.so` there.
// The result's `log` holds the compiler's output (errors and warnings), its `sandbox` the confinement.
BuildResult compile_cpu(const Candidate& c, const std::string& dir, const CompileOptions& o = {});

// The candidate after the preprocessor (`g++ -E` with the same flags, confined) into `text`, with its line
// markers, for the scan of the expanded source; the result's status is ok when preprocessing succeeded (else its
// log holds the errors). Writes the same files as compile_cpu.
BuildResult preprocess_cpu(const Candidate& c, const std::string& dir, std::string& text, const CompileOptions& o = {});

// The path the candidate's source has in `dir` (what the preprocessor's line markers name).
std::string cpu_source_path(const std::string& dir);

}  // namespace kevolve::cpu
