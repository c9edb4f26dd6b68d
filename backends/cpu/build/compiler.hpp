// Builds a CPU candidate into a shared object with g++, in a private temporary folder.
#pragma once
#include <string>
#include <vector>

#include "runtime/records/candidate.hpp"

namespace kevolve::cpu {

struct CompileOptions {
  std::string compiler = "g++";
  // -march=native: the evaluating machine's instruction set (the build runs where the candidate runs).
  std::vector<std::string> flags = {"-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=c++17", "-Wl,-z,now"};
  double timeout_s = 120;
};

// Writes the candidate and the ABI header into `dir`, compiles `candidate.so` there.
// The result's `log` holds the compiler's output (errors and warnings).
BuildResult compile_cpu(const Candidate& c, const std::string& dir, const CompileOptions& o = {});

}  // namespace kevolve::cpu
