#include "tools/kevolve/commands/problems_command.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include "runtime/config/problem_loader.hpp"

namespace kevolve::cli {

void add_problems_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("problems", "List the problems found under the problem folders");
  auto roots = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--problems", *roots,
                  "Problem folders to search (default: $KEVOLVE_PROBLEMS, ./problems, the installed copy)");
  cmd->callback([roots, &exit_code] {
    namespace fs = std::filesystem;
    const auto search = roots->empty() ? default_problem_roots() : *roots;
    std::set<std::string> seen;
    int bad = 0;
    for (auto& root : search) {
      std::error_code ec;
      if (!fs::is_directory(root, ec)) continue;
      for (auto& spec : fs::recursive_directory_iterator(root, ec)) {
        if (spec.path().filename() != "problem.toml") continue;
        auto p = load_problem(spec.path().string());
        if (!p) {
          std::cerr << p.error() << "\n";
          ++bad;
          continue;
        }
        if (!seen.insert(p->name).second) continue;
        std::cout << p->name << "  (" << spec.path().parent_path().string() << ")  reference: " << p->reference << ", "
                  << p->verify.size() << " verification shapes\n";
      }
      if (!seen.empty()) break;  // the first root that has problems wins, as for `eval`
    }
    exit_code = bad ? 1 : 0;
  });
}

}  // namespace kevolve::cli
