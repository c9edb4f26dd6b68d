// The HIP (AMD) backend: static scan -> hipcc for the target ([eval] arch, gfx90a by default) -> resource
// use from the code object's metadata, refused before any run when it spills or exceeds LDS (build()); then
// the kevolve-hip-eval worker — trusted, built where the HIP runtime is installed — verifies and times the
// candidate in a kevolve-hip-runner (HipBackend::evaluate()). Without an AMD GPU, or without the worker,
// every evaluation is a harness_error that says so: no verdict is ever made up. See docs/hip.md.
#pragma once
#include "backends/backend.hpp"
#include "backends/worker_client.hpp"

namespace kevolve::hip {

// Scans and compiles for hip_target(o.arch); never throws. The caller owns the folder in the result.
BuiltCandidate build(const Candidate& c, const EvalOptions& o);

// Where the worker is: $KEVOLVE_HIP_WORKER, else kevolve-hip-eval next to kevolve.
std::string hip_worker_path();

// Why candidates cannot be evaluated on this machine ("" when they can): the worker was not built (no HIP
// runtime when kevolve was built), or rocminfo finds no AMD GPU agent.
std::string unavailable_reason(const std::string& worker = hip_worker_path());

class HipBackend : public Backend {
 public:
  explicit HipBackend(std::string evaluator = hip_worker_path());
  // Evaluate on this machine's AMD GPU `index`: its worker sees only that GPU (HIP_VISIBLE_DEVICES).
  void use_gpu(int index);
  EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) override;
  const char* name() const override { return "hip"; }

 private:
  std::string evaluator_;
  WorkerClient worker_;
};

}  // namespace kevolve::hip
