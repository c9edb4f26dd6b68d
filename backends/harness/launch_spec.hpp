// The launch description of a kernel-only GPU candidate (CUDA or HIP): `// @kevolve <key> <expr>` comment
// lines in its source (see backends/kevolve_kernel.h). Parsed by the build steps (to reject a bad
// description before compiling) and by the trusted evaluators (to launch it on each shape). Pure C++;
// SMS is the device's multiprocessor (CUDA) or compute-unit (HIP) count.
#pragma once
#include <array>
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct LaunchSpec {
  std::string kernel;
  std::array<std::string, 3> grid{"1", "1", "1"}, block{"1", "1", "1"};
  std::string smem = "0";
};

// True when the source carries any `@kevolve` launch line (a kernel-only candidate).
bool has_launch_spec(const std::string& source);
// Parses the launch lines; errors name the line and what was expected.
Expected<LaunchSpec> parse_launch_spec(const std::string& source);
// The spec as launch lines again (written beside the built kernel image for the evaluator).
std::string format_launch_spec(const LaunchSpec& s);

struct LaunchDims {
  int64_t grid[3], block[3], smem;
};
// Evaluates the expressions for one shape; `sms` binds SMS. Errors name the key (grid, block_y, ...).
Expected<LaunchDims> resolve_launch(const LaunchSpec& s, ShapeBinding symbols, int64_t sms);

}  // namespace kevolve
