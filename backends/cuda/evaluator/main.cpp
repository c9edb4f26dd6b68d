// kevolve-cuda-eval: the trusted CUDA evaluator worker (the only process of the CUDA backend that links
// libtorch). Reads EvalRequest frames on stdin, answers EvalResult frames on stdout, until EOF. Started by
// `kevolve eval --backend cuda` and by device actors; each candidate runs in its own kevolve-cuda-runner.
// The same source is the HIP worker's (kevolve-hip-eval, built with KV_ON_HIP: backends/cuda/device_names.hpp).
#include <cstdlib>

#include "backends/cuda/device_names.hpp"
#include "backends/cuda/evaluator/evaluate.hpp"
#include "backends/harness/worker_loop.hpp"

int main(int argc, char**) {
  // Generated inputs and reference outputs of the GPU sizes are large: keep more of them between candidates.
  setenv("KEVOLVE_DATA_CACHE_MB", "16384", 0);
  return kevolve::harness::serve_worker(argc, kevolve::cuda::kEvaluatorName, kevolve::cuda::kRunnerName,
                                        kevolve::cuda::evaluate);
}
