// Loads and validates problem specs (TOML). Every error names the file, the key and what was expected.
#pragma once
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

// Parses and validates one problem.toml.
Expected<ProblemSpec> load_problem(const std::string& path);

// Finds problems/<suite>/<name>/problem.toml under the given roots (each root is a `problems` folder).
// Returns the path, or an error listing where it looked.
Expected<std::string> find_problem(const std::string& name, const std::vector<std::string>& roots);

// The problem folders kevolve searches by default: $KEVOLVE_PROBLEMS, ./problems, then the installed copy.
std::vector<std::string> default_problem_roots();

// Generator kinds the evaluators implement, with the numeric arguments each requires.
struct GeneratorKind {
  const char* kind;
  std::vector<const char*> numbers;
  std::vector<const char*> names;
};
const std::vector<GeneratorKind>& generator_kinds();

}  // namespace kevolve
