// Diagnosis of one evaluated node: what went wrong or what bounds its speed, as directives an operator
// can follow. Uses only the node's verdict, the problem's roofline figures and the device's measured copy
// bandwidth — never the answer.
#pragma once
#include <string>
#include <vector>

#include "runtime/records/node.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct Diagnosis {
  // One line with the facts, starting with the class: "compile error: <first error>", "incorrect: <reason>",
  // "memory-bound: ...", "partly memory-bound: ...", "far below the memory floor: compute- or latency-bound: ...",
  // "memory-bound by its arithmetic intensity: ..." (bandwidth unknown), "compute-bound: ...".
  std::string summary;
  std::vector<std::string> directives;
};

// `report`: the evaluator's report text for the node (compile log or verdict message), may be empty.
// `backend` picks the benchmark shape the node was timed on (bench_cuda on cuda). `peak_gbps`, when known
// (the copy bandwidth the evaluating device measured, EvalResult::peak_gbps), decides the bound: the
// problem's roofline bytes at that bandwidth are the memory floor, and a correct kernel is memory-bound only
// when it runs near that floor (>= 60 % of the bandwidth); far below it (< 30 %) it is compute or latency
// bound whatever the problem's arithmetic intensity. Without it the arithmetic intensity alone is stated.
Diagnosis diagnose(const NodeRecord& node, const ProblemSpec& spec, const std::string& report,
                   const std::string& backend = "cpu", double peak_gbps = 0);

}  // namespace kevolve
