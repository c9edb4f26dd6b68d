#include "tools/kevolve/commands/export_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "backends/backend.hpp"
#include "tools/kevolve/setup/problem_lookup.hpp"
#include "runtime/export/exporter.hpp"
#include "runtime/config/run_config.hpp"
#include "storage/store.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  std::string source, format = "torch-extension", out, problem, backend;
  std::vector<std::string> roots;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Fills spec name, source, backend and provenance from SOURCE; the error names what is missing.
std::string locate(const ExportArgs& a, std::string& problem, ExportRequest& r) {
  const fs::path src(a.source);
  if (fs::is_directory(src)) {  // a report folder: best/kernel.{cpp,cu} and report.json
    const bool cu = fs::exists(src / "best" / "kernel.cu");
    const fs::path k = src / "best" / (cu ? "kernel.cu" : "kernel.cpp");
    if (!fs::exists(k))
      return a.source + ": no best/kernel.cpp or best/kernel.cu (expected a report folder written by kevolve run)";
    r.source = read_text(k);
    r.backend = cu ? "cuda" : "cpu";
    const std::string js = read_text(src / "report.json");
    std::smatch m;
    if (problem.empty() && std::regex_search(js, m, std::regex(R"rx("problem":"([^"]+)")rx"))) problem = m[1];
    std::string speed = std::regex_search(js, m, std::regex(R"rx("speedup":([0-9.eE+-]+))rx"))
                            ? std::string(m[1]) + "x over PyTorch"
                            : "";
    r.provenance = "best kernel of " + a.source + (speed.empty() ? "" : ", " + speed);
    return problem.empty() ? a.source + "/report.json names no problem: pass --problem" : "";
  }
  if (src.extension() == ".toml") {  // a search config: its store's best correct node
    auto cfg = load_run_config(a.source);
    if (!cfg) return cfg.error();
    auto store = Store::open(cfg->store, true);
    if (!store) return store.error();
    // the best in one pass over the nodes, none held; an unreadable node stops the export (it could be the best)
    std::optional<NodeRecord> best_node;
    Status read = (*store)->each_node(cfg->search_id, false, [&](NodeRecord& n) {
      if (n.correct() && (!best_node || n.fitness > best_node->fitness)) best_node = std::move(n);
    });
    if (!read) return "store " + cfg->store + ": " + read.message + " (see `kevolve store verify`)";
    if (!best_node) return "search '" + cfg->search_id + "' in " + cfg->store + " has no correct kernel yet";
    const NodeRecord* best = &*best_node;
    auto s = (*store)->artifact(cfg->search_id, best->id, "source");
    if (!s) return s.error();
    r.source = *s;
    r.backend = cfg->backend;
    if (problem.empty()) problem = cfg->problem;
    char f[64];
    std::snprintf(f, sizeof f, "%.2fx", best->fitness);
    r.provenance = "search " + cfg->search_id + ", node " + std::to_string(best->id) + ", " + f +
                   " over PyTorch during the search";
    return "";
  }
  if (!fs::is_regular_file(src)) return a.source + ": not a report folder, a search config (.toml) or a kernel file";
  if (problem.empty()) return "exporting a kernel file needs --problem";
  r.source = read_text(src);
  r.backend = src.extension() == ".cu" ? "cuda" : "cpu";
  r.provenance = "kernel file " + src.filename().string();
  return "";
}

int run_export(const ExportArgs& a) {
  ExportRequest r;
  std::string problem = a.problem;
  if (auto err = locate(a, problem, r); !err.empty()) {
    std::cerr << "kevolve export: " << err << "\n";
    return 2;
  }
  if (!a.backend.empty()) r.backend = a.backend;
  auto spec = resolve_problem(problem, a.roots);
  if (!spec) {
    std::cerr << "kevolve export: " << spec.error() << "\n";
    return 2;
  }
  r.spec = *spec;
  r.format = a.format;
  r.out_dir = a.out.empty() ? "kevolve-export/" + spec->name + "-" + a.format : a.out;
  r.kernel_header = kernel_abi_header();
  auto made = export_kernel(r);
  if (!made) {
    std::cerr << "kevolve export: " << made.error() << "\n";
    return 2;
  }
  std::cout << "exported " << spec->name << " (" << r.backend << ", " << r.provenance << ") as " << a.format << " to "
            << r.out_dir << ":\n";
  for (auto& f : *made) std::cout << "  " << f << "\n";
  if (a.format == "torch-extension")
    std::cout << "build: cd " << r.out_dir
              << " && pip install .   (or python3 setup.py build_ext --inplace); then import " << spec->name
              << "_kevolve\n";
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Write a found kernel as a PyTorch extension, standalone source, or KernelBench ModelNew");
  cmd->add_option("source", a->source,
                  "A search config (its best kernel), a report folder (kevolve-out/ID), or a kernel file")
      ->required();
  cmd->add_option("--format", a->format,
                  "torch-extension (setup.py + CMakeLists.txt), cuda-source (kernel + launcher + header), "
                  "kernelbench (a ModelNew file)")
      ->check(CLI::IsMember({"torch-extension", "cuda-source", "kernelbench"}));
  cmd->add_option("--out", a->out,
                  "Folder to write (must not exist or be empty; default kevolve-export/PROBLEM-FORMAT)");
  cmd->add_option("--problem", a->problem, "The problem (name, folder or problem.toml); needed for a kernel file");
  cmd->add_option("--backend", a->backend, "cpu or cuda (default: the search's, or the file's extension)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--problems", a->roots, "Problem folders to search");
  cmd->footer(
      "Exit status: 0 when written, 2 when the source, problem or format cannot be exported (the message says why).");
  cmd->callback([a, &exit_code] { exit_code = run_export(*a); });
}

}  // namespace kevolve::cli
