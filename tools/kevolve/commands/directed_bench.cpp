#include "tools/kevolve/commands/directed_bench.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "backends/cpu/cpu_backend.hpp"
#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "tools/kevolve/setup/problem_lookup.hpp"
#include "runtime/operators/template_operator.hpp"
#include "runtime/search/greedy.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

struct Measured {
  EvalStatus status = EvalStatus::harness_error;
  double fitness = 0, candidate_ms = 0;
};

void all_params(const KernelTemplate& t, size_t i, Params& cur, std::vector<Params>& out) {
  if (i == t.params.size()) {
    if (t.violated(cur).empty()) out.push_back(cur);
    return;
  }
  for (auto& v : t.params[i].values) {
    cur[t.params[i].name] = v;
    all_params(t, i + 1, cur, out);
  }
}

// Evaluates every parameter set not yet in the table file; returns the whole table.
std::map<std::string, Measured> measure_space(const ProblemSpec& spec, const KernelTemplate& t, const std::string& file,
                                              const EvalOptions& opt) {
  std::map<std::string, Measured> table;
  if (std::ifstream in(file); in)
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      std::string key;
      int status;
      Measured m;
      if (std::getline(ls, key, '\t') && ls >> status >> m.fitness >> m.candidate_ms) {
        m.status = static_cast<EvalStatus>(status);
        table[key] = m;
      }
    }
  std::vector<Params> space;
  Params cur;
  all_params(t, 0, cur, space);
  cpu::CpuBackend backend;
  std::ofstream out(file, std::ios::app);
  size_t done = 0;
  for (auto& p : space) {
    ++done;
    const std::string key = params_key(p);
    if (table.count(key)) continue;
    Candidate c;
    c.source = *t.render(p);
    c.entry = spec.entry;
    EvalResult r = backend.evaluate_source(spec, c, opt);
    Measured m{r.status, r.status == EvalStatus::ok ? r.speedup : 0, r.candidate.median_ms};
    table[key] = m;
    out << key << '\t' << static_cast<int>(m.status) << ' ' << m.fitness << ' ' << m.candidate_ms << '\n' << std::flush;
    std::fprintf(stderr, "\r%s: %zu/%zu measured", spec.name.c_str(), done, space.size());
  }
  std::fprintf(stderr, "\n");
  return table;
}

// A greedy search replayed over measured results; returns evaluations until `goal` was reached (0 = not).
int64_t replay(const KernelTemplate& t, const ProblemSpec& spec, bool directed,
               const std::map<std::string, Measured>& table, uint64_t seed, int64_t budget, double goal) {
  StrategyConfig sc;
  sc.max_children = 4;
  GreedyStrategy strategy(sc);
  TemplateOperator op(t);
  if (directed) op.follow_directives(spec);
  Rng rng(seed);
  SearchGraph g;
  uint64_t next = 1;
  for (int64_t evals = 0; evals < budget;) {
    auto props = strategy.propose(g, 1, rng);
    if (props.empty()) return 0;
    auto child = op.make(props[0], g, rng);
    if (!child) {
      // nothing new near this parent: mark it as fully expanded by proposing again next round
      NodeRecord skip;
      skip.id = next++;
      skip.parents = props[0].parents;
      skip.op = props[0].op;  // the proposal it stands for; its params say it was skipped
      skip.params = {{"skipped", std::to_string(skip.id)}};
      skip.state = NodeState::scored;
      skip.status = EvalStatus::harness_error;
      g.upsert(skip);
      continue;
    }
    NodeRecord n;
    n.id = next++;
    n.parents = props[0].parents;
    n.op = props[0].op;
    n.params = child->params;
    auto it = table.find(params_key(n.params));
    const Measured m = it == table.end() ? Measured{} : it->second;
    n.state = NodeState::scored;
    n.status = m.status;
    n.fitness = m.fitness;
    n.candidate_ms = m.candidate_ms;
    g.upsert(n);
    strategy.observe(g, n);
    ++evals;
    if (n.fitness >= goal) return evals;
  }
  return 0;
}

int run(const std::vector<std::string>& problems, int seeds, int64_t budget, const std::string& dir, double min_time) {
  fs::create_directories(dir);
  const std::string hw_target = detect_cpu_target();
  std::printf(
      "| problem | space | best measured | blind: evaluations to 95%% of best (per seed) | directed: same | blind mean "
      "| directed mean |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (auto& name : problems) {
    auto spec = resolve_problem(name, {});
    if (!spec) {
      std::cerr << "kevolve bench directed: " << spec.error() << "\n";
      return 2;
    }
    auto t = find_template("cpu", spec->name, default_knowledge_roots());
    if (!t) {
      std::cerr << "kevolve bench directed: " << t.error() << "\n";
      return 2;
    }
    if (auto hw = load_hardware(fs::path(t->dir).parent_path().parent_path().parent_path().string(), hw_target))
      t->hardware = hw->numbers;
    EvalOptions opt;
    opt.min_time_s = min_time;
    opt.min_reps = 10;
    auto table = measure_space(*spec, *t, dir + "/table-" + spec->name + ".tsv", opt);
    double best = 0;
    for (auto& [k, m] : table) best = std::max(best, m.fitness);
    const double goal = 0.95 * best;
    std::string cols[2];
    double mean[2] = {0, 0};
    for (int mode = 0; mode < 2; ++mode)
      for (int s = 1; s <= seeds; ++s) {
        const int64_t e = replay(*t, *spec, mode == 1, table, static_cast<uint64_t>(s), budget, goal);
        cols[mode] += (cols[mode].empty() ? "" : " ") + (e ? std::to_string(e) : ">" + std::to_string(budget));
        mean[mode] += static_cast<double>(e ? e : budget + 1) / seeds;
      }
    std::printf("| %s | %zu | %.2fx | %s | %s | %.1f | %.1f |\n", spec->name.c_str(), table.size(), best,
                cols[0].c_str(), cols[1].c_str(), mean[0], mean[1]);
  }
  std::printf("\n(\">N\": not reached within the budget of N evaluations; counted as N+1 in the mean)\n");
  return 0;
}

}  // namespace

void add_directed_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "directed", "Directed (diagnosis-following) vs blind template mutation, in evaluations to the best kernel");
  auto problems =
      std::make_shared<std::vector<std::string>>(std::vector<std::string>{"gelu", "softmax_rows", "map_id"});
  auto seeds = std::make_shared<int>(5);
  auto budget = std::make_shared<int64_t>(60);
  auto dir = std::make_shared<std::string>("kevolve-out/directed-bench");
  auto min_time = std::make_shared<double>(0.05);
  cmd->add_option("--problems", *problems, "Core problems (each needs a CPU template)")->capture_default_str();
  cmd->add_option("--seeds", *seeds, "Searches per mode and problem")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--evaluations", *budget, "Evaluation budget of each search")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(2), int64_t(100000)));
  cmd->add_option("--dir", *dir, "Where the measured tables are kept (re-used by later runs)")->capture_default_str();
  cmd->add_option("--min-time", *min_time, "Seconds of timing per side when measuring a kernel")->capture_default_str();
  cmd->callback([=, &exit_code] { exit_code = run(*problems, *seeds, *budget, *dir, *min_time); });
}

}  // namespace kevolve::cli
