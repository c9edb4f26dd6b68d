// Diagnosis of one evaluated node: what went wrong or what bounds its speed, as directives an operator
// can follow. Uses only the node's verdict and the problem's roofline figures — never the answer.
#pragma once
#include <string>
#include <vector>

#include "runtime/records/node.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct Diagnosis {
  std::string summary;  // one line, e.g. "memory-bound: 36 GB/s achieved, 0.25 flop/byte"
  std::vector<std::string> directives;
};

// `report`: the evaluator's report text for the node (compile log or verdict message), may be empty.
// `backend` picks the benchmark shape the node was timed on (bench_cuda on cuda); `peak_gbps`, when known
// (the device's measured copy bandwidth), places a memory-bound kernel against the device's limit.
Diagnosis diagnose(const NodeRecord& node, const ProblemSpec& spec, const std::string& report,
                   const std::string& backend = "cpu", double peak_gbps = 0);

}  // namespace kevolve
