#include "tools/kevolve/setup/problem_lookup.hpp"

#include "backends/python/python_backend.hpp"

#include <filesystem>

#include "runtime/config/problem_loader.hpp"

namespace kevolve::cli {

Expected<ProblemSpec> resolve_problem(const std::string& problem, const std::vector<std::string>& roots) {
  std::string path = problem;
  if (problem.size() > 3 && problem.substr(problem.size() - 3) == ".py") {  // a KernelBench-format file
    if (!std::filesystem::is_regular_file(problem))
      return Expected<ProblemSpec>::failure(problem + ": no such problem file");
    return python::kernelbench_problem(problem);
  }
  if (std::filesystem::is_directory(problem)) {
    path = problem + "/problem.toml";
  } else if (!(problem.size() > 5 && problem.substr(problem.size() - 5) == ".toml")) {
    auto found = find_problem(problem, roots.empty() ? default_problem_roots() : roots);
    if (!found) return Expected<ProblemSpec>::failure(found.error());
    path = *found;
  }
  auto spec = load_problem(path);
  if (!spec) return Expected<ProblemSpec>::failure("bad problem spec: " + spec.error());
  return spec;
}

}  // namespace kevolve::cli
