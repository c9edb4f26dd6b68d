// kevolve-hip-eval: the trusted HIP evaluator worker. Reads EvalRequest frames on stdin, answers EvalResult
// frames on stdout, until EOF (backends/harness/worker_loop.hpp), as kevolve-cpu-eval and kevolve-cuda-eval.
//
// What it does today: it asks the HIP runtime for AMD GPUs and, finding none, answers every request with a
// harness_error that says so. The evaluation itself (device arena shared with a torch-free runner that
// loads the code object with hipModuleLoadData and launches it with hipModuleLaunchKernel, references on
// the trusted side, device-side checks, event timing with the cache flushed) is not written yet: with a GPU
// present it answers a harness_error naming that, never a verdict it did not measure (docs/hip.md).
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <string>

#include "backends/harness/worker_loop.hpp"

namespace {

kevolve::EvalResult harness_error(std::string reason, std::string message) {
  kevolve::EvalResult r;
  r.status = kevolve::EvalStatus::harness_error;
  r.reason = std::move(reason);
  r.message = std::move(message);
  return r;
}

// The AMD GPUs the HIP runtime sees; a message when there are none.
kevolve::EvalResult evaluate(const kevolve::EvalRequest& q, const std::string&) {
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess || n == 0)
    return harness_error("device", std::string("no AMD GPU (the HIP runtime found none: ") +
                                       (e != hipSuccess ? hipGetErrorString(e) : "0 devices") + ")");
  hipDeviceProp_t p{};
  if (hipGetDeviceProperties(&p, 0) != hipSuccess) std::snprintf(p.gcnArchName, sizeof p.gcnArchName, "unknown");
  kevolve::EvalResult r = harness_error(
      "not_implemented", std::string("an AMD GPU is present (") + p.gcnArchName +
                             "), but this kevolve-hip-eval cannot verify or time candidates yet; no verdict for " +
                             q.artifact);
  r.device = p.gcnArchName;
  return r;
}

}  // namespace

int main(int argc, char**) {
  return kevolve::harness::serve_worker(argc, "kevolve-hip-eval", "kevolve-hip-runner", evaluate);
}
