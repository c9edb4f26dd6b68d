// What a build is made for, as one comparable string: "cpu:<gcc's -march=native>" (the instruction set
// this machine compiles for), "cuda:<sm_XY>" (the architecture of the configured or local GPU), "hip:<gfx...>"
// (the AMD target: [eval] arch, or the local GPU's as rocminfo names it), or the
// backend's name where the build does not depend on the machine (python). A coordinator stamps each job
// with the target it built for; an evaluator whose own target differs rebuilds the candidate from source.
// KEVOLVE_BUILD_TARGET overrides what this machine reports (e.g. to force evaluators to rebuild).
// What the devices themselves are (model, class, memory) is in backends/device_info.hpp.
#pragma once
#include <string>

#include "runtime/records/eval_request.hpp"

namespace kevolve {

// The target a build on this machine produces for `backend` with options `o` (cuda: o.arch).
std::string build_target(const std::string& backend, const EvalOptions& o);

// The target of this machine's own device `index` for `backend` (cuda: asks nvidia-smi for the compute
// capability, "cuda:unknown" when it cannot tell; hip: rocminfo's name of the index-th GPU agent, e.g.
// "hip:gfx90a", "hip:unknown" when there is none).
std::string device_target(const std::string& backend, int index);

// The AMD target a HIP build is made for: `arch` when it names one (gfx...), else gfx90a.
std::string hip_target(const std::string& arch);

}  // namespace kevolve
