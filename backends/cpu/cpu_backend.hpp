// The CPU backend: static scan -> g++ build (build()), then the kevolve-cpu-eval worker verifies and
// times the candidate in a sandboxed runner (CpuBackend::evaluate()). See backends/backend.hpp.
#pragma once
#include "backends/backend.hpp"
#include "backends/worker_client.hpp"

namespace kevolve::cpu {

// Scans and compiles; never throws. The caller owns the folder in the result.
BuiltCandidate build(const Candidate& c, const EvalOptions& o);

class CpuBackend : public Backend {
 public:
  // `evaluator`: path of kevolve-cpu-eval (default: next to the running program).
  explicit CpuBackend(std::string evaluator = sibling_executable("kevolve-cpu-eval"));
  EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) override;
  const char* name() const override { return "cpu"; }

 private:
  std::string evaluator_;
  WorkerClient worker_;
};

}  // namespace kevolve::cpu
