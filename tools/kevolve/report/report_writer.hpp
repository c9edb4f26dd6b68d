// Writes the results of a search from its store: DIR/report.json, DIR/best/ (kernel source and
// parameters) and DIR/report.html (search tree and best fitness over evaluations, self-contained).
// The best figure is re-measured: the top candidates are re-timed in a fresh evaluator worker, each
// run alternating reference and candidate passes, and the best re-timed one is reported.
#pragma once
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/records/eval_request.hpp"

namespace kevolve {

struct ReportRequest {
  std::string store;  // opened read-only: a running search may hold it
  std::string search_id;
  std::string out_dir;
  ProblemSpec spec;
  std::string backend = "cpu";
  int retime_top = 3;
  EvalOptions retime;  // options for re-timing (longer min_time)
  bool nsight = true;  // cuda: profile the best kernel with Nsight Compute (replays it: seconds)
};

struct ReportSummary {
  uint64_t best_node = 0;
  double best_speedup = 0;    // re-timed
  double search_speedup = 0;  // as measured during the search
  int64_t evaluated = 0, correct = 0, failed = 0;
};

// Errc::not_found / corrupt when the search cannot be read; Errc::io naming the file that could not be written.
Expected<ReportSummary> write_report(const ReportRequest& r);

}  // namespace kevolve
