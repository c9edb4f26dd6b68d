// The CUDA evaluation of one candidate: verification trials on every shape with the same detectors as the
// CPU harness, then CUDA-event timing with L2 flushes, alternating with the libtorch (CUDA) reference.
// Runs in the trusted evaluator (kevolve-cuda-eval); the candidate only ever runs in a kevolve-cuda-runner.
#pragma once
#include <string>

#include "runtime/records/eval_request.hpp"

namespace kevolve::cuda {

// `runner_path`: the kevolve-cuda-runner executable.
EvalResult evaluate(const EvalRequest& request, const std::string& runner_path);

}  // namespace kevolve::cuda
