#include "runtime/cli/suite_command.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "backends/python/python_backend.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

struct SuiteArgs {
  std::string dir, candidates, out, backend = "cpu";
  EvalOptions options;
};

struct Row {
  std::string problem, candidate;
  EvalResult r;
};

std::string fmt(double x, const char* f = "%.2f") {
  char b[32];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

int run_suite(SuiteArgs a) {
  if (!fs::is_directory(a.dir)) { std::cerr << "kevolve suite: " << a.dir << " is not a folder\n"; return 2; }
  std::vector<fs::path> problems;
  for (auto& e : fs::directory_iterator(a.dir))
    if (e.path().extension() == ".py") problems.push_back(e.path());
  std::sort(problems.begin(), problems.end());
  if (problems.empty()) { std::cerr << "kevolve suite: no .py problems in " << a.dir << "\n"; return 2; }
  if (!a.candidates.empty() && !fs::is_directory(a.candidates)) {
    std::cerr << "kevolve suite: --candidates " << a.candidates << " is not a folder\n";
    return 2;
  }
  python::PythonBackend backend(a.backend == "cuda" ? "cuda" : "cpu");
  std::vector<Row> rows;
  for (auto& p : problems) {
    const ProblemSpec spec = python::kernelbench_problem(p.string());
    std::cerr << "kevolve suite: " << spec.name << ": reference baseline\n";
    rows.push_back({spec.name, "(reference)", backend.evaluate_reference(spec, a.options)});
    if (a.candidates.empty()) continue;
    std::vector<fs::path> cands;
    for (auto& e : fs::directory_iterator(a.candidates))
      if (e.path().extension() == ".py" && e.path().filename().string().rfind(spec.name + "__", 0) == 0) cands.push_back(e.path());
    std::sort(cands.begin(), cands.end());
    for (auto& c : cands) {
      std::cerr << "kevolve suite: " << spec.name << ": " << c.filename().string() << "\n";
      std::ifstream in(c);
      std::stringstream s;
      s << in.rdbuf();
      Candidate cand;
      cand.language = "python";
      cand.source = s.str();
      rows.push_back({spec.name, c.filename().string(), backend.evaluate_source(spec, cand, a.options)});
    }
  }
  std::ostringstream t;
  t << "| problem | candidate | kind | status | eager ms | candidate ms | vs eager | vs compile |\n|---|---|---|---|---|---|---|---|\n";
  struct Tally { int n = 0, correct = 0, fast = 0; double logsum = 0; };
  std::map<std::string, Tally> by_kind;
  for (auto& row : rows) {
    const EvalResult& r = row.r;
    const bool ok = r.status == EvalStatus::ok;
    const std::string kind = r.kind.empty() ? "?" : r.kind;
    t << "| " << row.problem << " | " << row.candidate << " | " << kind << " | " << status_name(r.status)
      << (ok || r.reason.empty() ? "" : " [" + r.reason + "]") << " | " << (ok ? fmt(r.reference.median_ms, "%.4g") : "–") << " | "
      << (ok ? fmt(r.candidate.median_ms, "%.4g") : "–") << " | " << (ok ? fmt(r.speedup) + "x" : "–") << " | "
      << (ok && r.compile_speedup > 0 ? fmt(r.compile_speedup) + "x" : "–") << " |\n";
    Tally& k = by_kind[kind];
    ++k.n;
    if (ok) {
      ++k.correct;
      k.fast += r.speedup > 1.0;
      k.logsum += std::log(std::max(r.speedup, 1e-9));
    }
  }
  t << "\n";
  for (const char* kind : {"kernel", "framework", "reference"}) {
    auto it = by_kind.find(kind);
    if (it == by_kind.end()) continue;
    const Tally& k = it->second;
    t << "- " << kind << (std::string(kind) == "kernel" ? " (generated kernels)" : std::string(kind) == "framework" ? " (framework-level rewrites, counted apart)" : " (the reference itself)")
      << ": " << k.correct << " of " << k.n << " correct, fast_1 " << k.fast << " of " << k.n << " ("
      << fmt(k.n ? 100.0 * k.fast / k.n : 0, "%.0f") << " %), geometric-mean speedup over eager "
      << (k.correct ? fmt(std::exp(k.logsum / k.correct)) + "x" : std::string("–")) << "\n";
  }
  t << "\nMeasured by kevolve suite on the " << (a.backend == "cuda" ? "GPU" : "CPU") << " (Python interpreter, "
    << (a.options.threads > 0 ? std::to_string(a.options.threads) : std::string("all")) << " threads each side, " << a.options.trials
    << " verification trials, median of alternating timed passes).\n";
  std::cout << t.str();
  if (!a.out.empty()) std::ofstream(a.out) << t.str();
  return 0;
}

}  // namespace

void add_suite_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SuiteArgs>();
  a->options.min_time_s = 0.1;
  auto* cmd = app.add_subcommand("suite", "Run a folder of KernelBench-format problems through the Python interpreter and tabulate");
  cmd->add_option("dir", a->dir, "Folder of KernelBench-format .py problems")->required();
  cmd->add_option("--backend", a->backend, "cpu, or cuda (the GPU through the same Python interpreter)")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--candidates", a->candidates, "Folder of ModelNew files named <problem-stem>__<anything>.py");
  cmd->add_option("--out", a->out, "Also write the table (markdown) to this file");
  cmd->add_option("--threads", a->options.threads, "Threads for candidate and reference alike (default: all cores)");
  cmd->add_option("--trials", a->options.trials, "Verification trials per candidate (>= 5)")->check(CLI::Range(5, 1000));
  cmd->add_option("--min-time", a->options.min_time_s, "Seconds of timed runs per side, at least (default 0.1)");
  cmd->footer("Every problem's own Model is run as a candidate too (kind 'reference'): the correct baseline. Kernels and "
              "framework-level rewrites (candidates without kernel code of their own) are counted apart.");
  cmd->callback([a, &exit_code] { exit_code = run_suite(*a); });
}

}  // namespace kevolve::cli
