// WorkerClient: the actor side of the worker protocol. Starts a backend's evaluator executable
// (e.g. kevolve-cpu-eval) with pipes, sends EvalRequest frames and reads EvalResult frames.
// No CAF and no libtorch here; a worker that dies yields a harness_error result, never a crash.
#pragma once
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/eval_request.hpp"

namespace kevolve {

class WorkerClient {
 public:
  ~WorkerClient();
  // Starts `executable`; unavailable, saying why, when it cannot be started.
  Status start(const std::string& executable);
  EvalResult evaluate(const EvalRequest& q);
  // evaluate() in `executable`, started on first use and again after it died (a dead worker's request
  // comes back as a harness_error with reason "worker"; the next request gets a fresh worker).
  EvalResult evaluate_in(const std::string& executable, const EvalRequest& q);
  void stop();
  // Set in the worker's environment when it starts (e.g. CUDA_VISIBLE_DEVICES: the GPU of this device).
  void set_env(std::string name, std::string value) { env_.emplace_back(std::move(name), std::move(value)); }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string exe_;
  std::vector<std::pair<std::string, std::string>> env_;
};

// Path of a sibling executable of the running program (workers are installed next to `kevolve`).
std::string sibling_executable(const std::string& name);

}  // namespace kevolve
