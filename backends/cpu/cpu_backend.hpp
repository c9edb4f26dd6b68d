// The CPU backend end to end for one candidate, in two steps that can run on different actors:
//   build():    static scan -> g++ build into a private folder (the compile farm's work)
//   evaluate(): the kevolve-cpu-eval worker verifies and times it in a sandboxed runner (the device's work)
// evaluate_source() does both, for `kevolve eval`.
#pragma once
#include <optional>

#include "backends/worker_client.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"

namespace kevolve::cpu {

struct BuiltCandidate {
  BuildResult build;               // artifact inside `dir` when ok
  std::string dir;                 // private build folder; remove_build_dir() when done with it
  std::string entry;
  std::optional<EvalResult> verdict;  // set when the build step already decided (rejected, compile_error)
};

// Scans and compiles; never throws. The caller owns the folder in the result.
BuiltCandidate build(const Candidate& c, const EvalOptions& o);
void remove_build_dir(const std::string& dir);

class CpuBackend {
 public:
  // `evaluator`: path of kevolve-cpu-eval (default: next to the running program).
  explicit CpuBackend(std::string evaluator = sibling_executable("kevolve-cpu-eval"));
  // Evaluates a successful build in the (long-lived, restarted when it dies) evaluator worker.
  EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o);
  // build + evaluate + clean-up.
  EvalResult evaluate_source(const ProblemSpec& spec, const Candidate& c, const EvalOptions& o);

 private:
  std::string evaluator_;
  WorkerClient worker_;
  bool started_ = false;
};

}  // namespace kevolve::cpu
