// The CPU backend end to end for one candidate: static scan -> g++ build in a private folder ->
// evaluation in the kevolve-cpu-eval worker (which runs the candidate in a sandboxed runner).
// This is what `kevolve eval` calls and what a CPU device actor will wrap.
#pragma once
#include "backends/worker_client.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"

namespace kevolve::cpu {

class CpuBackend {
 public:
  // `evaluator`: path of kevolve-cpu-eval (default: next to the running program).
  explicit CpuBackend(std::string evaluator = sibling_executable("kevolve-cpu-eval"));
  EvalResult evaluate(const ProblemSpec& spec, const Candidate& c, const EvalOptions& o);

 private:
  std::string evaluator_;
  WorkerClient worker_;
  bool started_ = false;
};

}  // namespace kevolve::cpu
