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
// `achieved_gbps`: the fastest rate at which any measured run of the search (reference or candidate) moved
// the problem's bytes (fastest_achieved_gbps); with the node's own reference and candidate times it refuses
// a measured bandwidth that a run beat (a copy measured while other work held the machine): no floor is
// then stated, and the summary says why.
// An incorrect node's report ("N element(s) ..., first at [i, j] ... (verify[k] (R=7, C=33), ...)") is read
// for where the bad elements lie against the output's shape: a row tail past the last full vector, the
// first column or row, a stride, or a later row.
Diagnosis diagnose(const NodeRecord& node, const ProblemSpec& spec, const std::string& report,
                   const std::string& backend = "cpu", double peak_gbps = 0, double achieved_gbps = 0);

// The bytes per second at which a run of `ms` milliseconds moves the problem's roofline bytes on the
// backend's benchmark shape, in GB/s (0 when either is unknown).
double achieved_gbps(const ProblemSpec& spec, const std::string& backend, double ms);

// The fastest rate any correct node of `nodes` (its candidate's or its reference's median time) moved the
// problem's bytes at, in GB/s; `by` says whose run it was ("the reference (timed with node 3)", "node 4").
template <class Nodes>
double fastest_achieved_gbps(const Nodes& nodes, const ProblemSpec& spec, const std::string& backend,
                             std::string* by = nullptr) {
  double best = 0;
  for (auto& [id, n] : nodes) {
    if (!n.correct()) continue;
    for (bool ref : {true, false}) {
      const double g = achieved_gbps(spec, backend, ref ? n.reference_ms : n.candidate_ms);
      if (g <= best) continue;
      best = g;
      if (by)
        *by = ref ? "the reference (timed with node " + std::to_string(n.id) + ")" : "node " + std::to_string(n.id);
    }
  }
  return best;
}

// Where an incorrect kernel's bad elements lie, read from the evaluator's report and the output's shape
// ("" when the report gives no position): see diagnose().
std::string locate_failure(const std::string& report, const ProblemSpec& spec);

}  // namespace kevolve
