// The CUDA backend: static scan -> NVRTC (kernel-only) or nvcc (host code) for the device's architecture
// (build()), then the kevolve-cuda-eval worker — built on the GPU node against its own libtorch — verifies
// and times the candidate in a kevolve-cuda-runner (CudaBackend::evaluate()). See backends/backend.hpp.
#pragma once
#include "backends/backend.hpp"
#include "backends/worker_client.hpp"

namespace kevolve::cuda {

// Scans and compiles for o.arch; never throws. The caller owns the folder in the result.
BuiltCandidate build(const Candidate& c, const EvalOptions& o);

// Where the worker is: $KEVOLVE_CUDA_WORKER, else kevolve-cuda-eval next to kevolve.
std::string cuda_worker_path();

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(std::string evaluator = cuda_worker_path());
  // Evaluate on this process's CUDA device `index`: its worker sees only that GPU.
  void use_gpu(int index);
  EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) override;
  const char* name() const override { return "cuda"; }

 private:
  std::string evaluator_;
  WorkerClient worker_;
};

}  // namespace kevolve::cuda
