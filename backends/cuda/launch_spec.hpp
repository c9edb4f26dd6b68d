// The CUDA interpreter's name for the shared launch description (backends/harness/launch_spec.hpp).
#pragma once
#include "backends/harness/launch_spec.hpp"

namespace kevolve::cuda {

using kevolve::format_launch_spec;
using kevolve::has_launch_spec;
using kevolve::LaunchDims;
using kevolve::LaunchSpec;
using kevolve::parse_launch_spec;
using kevolve::resolve_launch;

}  // namespace kevolve::cuda
