// The CPU evaluation of one candidate: verification trials on every shape, the anti-cheat detectors,
// and side-by-side timing against the libtorch reference. Runs in the trusted evaluator process; the
// candidate itself only ever runs inside a RunnerProcess.
#pragma once
#include <string>

#include "runtime/records/eval_request.hpp"

namespace kevolve::cpu {

// `runner_path`: the kevolve-cpu-runner executable.
EvalResult evaluate(const EvalRequest& request, const std::string& runner_path);

}  // namespace kevolve::cpu
