// kevolve-cuda-eval: the trusted CUDA evaluator worker (the only process of the CUDA backend that links
// libtorch). Reads EvalRequest frames on stdin, answers EvalResult frames on stdout, until EOF. Started by
// `kevolve eval --backend cuda` and by device actors; each candidate runs in its own kevolve-cuda-runner.
// The same source is the HIP worker's (kevolve-hip-eval, built with KV_ON_HIP: backends/cuda/device_names.hpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/cuda/device_names.hpp"
#include "backends/cuda/evaluator/evaluate.hpp"
#include "backends/harness/worker_loop.hpp"

int main(int argc, char**) {
  // Generated inputs and reference outputs of the GPU sizes are large and live on the device (evaluate.cpp):
  // keep up to 16 GiB of them between candidates, at most a quarter of the device's memory.
  if (!std::getenv("KEVOLVE_DATA_CACHE_MB")) {
    size_t free = 0, total = 0;
    int64_t mb = 16384;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) mb = std::min<int64_t>(mb, static_cast<int64_t>(total >> 22));
    setenv("KEVOLVE_DATA_CACHE_MB", std::to_string(mb).c_str(), 0);
  }
  return kevolve::harness::serve_worker(argc, kevolve::cuda::kEvaluatorName, kevolve::cuda::kRunnerName,
                                        kevolve::cuda::evaluate);
}
