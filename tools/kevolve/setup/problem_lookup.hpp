// Resolves a problem given on the command line or in a config: a problem.toml path, a problem folder,
// or a name searched under the problem folders.
#pragma once
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::cli {

Expected<ProblemSpec> resolve_problem(const std::string& problem, const std::vector<std::string>& roots);

}  // namespace kevolve::cli
