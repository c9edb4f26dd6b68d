#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/commands/suite_command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <cstdlib>
#include <cstdio>
#include <thread>
#include <optional>
#include <sstream>

#include "actors/protocol/run_search.hpp"
#include "backends/python/python_backend.hpp"
#include "knowledge/hardware_profile.hpp"
#include "tools/kevolve/setup/kernelbench_setup.hpp"
#include "runtime/records/records_codec.hpp"
#include "runtime/core/wire.hpp"
#include "storage/store.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

struct SuiteArgs {
  std::string dir, candidates, out, backend = "cpu", store = "kevolve-suite-store";
  int budget = 0;  // evaluations per problem's search; 0 = no search
  uint64_t seed = 1;
  int shard = 0, shards = 1;              // --shard K/N: only the problems at sorted positions i with i % N == K
  std::vector<std::string> results_from;  // further stores whose finished problem results count as done
  EvalOptions options;
};

std::atomic<bool> g_interrupted{false};
void on_signal(int) { g_interrupted = true; }

std::string fmt(double x, const char* f = "%.2f") {
  char b[32];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

std::string status_text(const EvalResult& r) {
  return std::string(status_name(r.status)) +
         (r.status == EvalStatus::ok || r.reason.empty() ? "" : " [" + r.reason + "]");
}

// "1.23x", or "unavailable" for a correct candidate whose reference could not be timed under torch.compile.
std::string vs_compile(const EvalResult& r) {
  if (r.status != EvalStatus::ok) return "–";
  return r.compile_speedup > 0 ? fmt(r.compile_speedup) + "x" : "unavailable";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Candidate python_candidate(std::string source) {
  Candidate c;
  c.language = "python";
  c.source = std::move(source);
  return c;
}

std::string measured_by(const SuiteArgs& a) {
  return "Measured by kevolve suite on the " + std::string(a.backend == "cuda" ? "GPU" : "CPU") +
         " (Python interpreter, " + (a.options.threads > 0 ? std::to_string(a.options.threads) : std::string("all")) +
         " threads each side, " + std::to_string(a.options.trials) +
         " verification trials, median of alternating timed passes)";
}

// ---- --candidates (or nothing): the given ModelNew files and the reference baseline, one row each ----------

int run_given(const SuiteArgs& a, const std::vector<fs::path>& problems, python::PythonBackend& backend,
              std::ostringstream& t) {
  struct Row {
    std::string problem, candidate;
    EvalResult r;
  };
  std::vector<Row> rows;
  for (auto& p : problems) {
    const ProblemSpec spec = python::kernelbench_problem(p.string());
    std::cerr << "kevolve suite: " << spec.name << ": reference baseline\n";
    rows.push_back({spec.name, "(reference)", backend.evaluate_reference(spec, a.options)});
    if (a.candidates.empty()) continue;
    std::vector<fs::path> cands;
    for (auto& e : fs::directory_iterator(a.candidates))
      if (e.path().extension() == ".py" && e.path().filename().string().rfind(spec.name + "__", 0) == 0)
        cands.push_back(e.path());
    std::sort(cands.begin(), cands.end());
    for (auto& c : cands) {
      std::cerr << "kevolve suite: " << spec.name << ": " << c.filename().string() << "\n";
      rows.push_back(
          {spec.name, c.filename().string(), backend.evaluate_source(spec, python_candidate(read_file(c)), a.options)});
    }
  }
  t << "| problem | candidate | kind | status | eager ms | candidate ms | vs eager | vs compile "
       "|\n|---|---|---|---|---|---|---|---|\n";
  struct Tally {
    int n = 0, correct = 0, fast = 0;
    double logsum = 0;
  };
  std::map<std::string, Tally> by_kind;
  for (auto& row : rows) {
    const EvalResult& r = row.r;
    const bool ok = r.status == EvalStatus::ok;
    const std::string kind = r.kind.empty() ? "?" : r.kind;
    t << "| " << row.problem << " | " << row.candidate << " | " << kind << " | " << status_text(r) << " | "
      << (ok ? fmt(r.reference.median_ms, "%.4g") : "–") << " | " << (ok ? fmt(r.candidate.median_ms, "%.4g") : "–")
      << " | " << (ok ? fmt(r.speedup) + "x" : "–") << " | "
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
    t << "- " << kind
      << (std::string(kind) == "kernel"      ? " (generated kernels)"
          : std::string(kind) == "framework" ? " (framework-level rewrites, counted apart)"
                                             : " (the reference itself)")
      << ": " << k.correct << " of " << k.n << " correct, fast_1 " << k.fast << " of " << k.n << " ("
      << fmt(k.n ? 100.0 * k.fast / k.n : 0, "%.0f") << " %), geometric-mean speedup over eager "
      << (k.correct ? fmt(std::exp(k.logsum / k.correct)) + "x" : std::string("–")) << "\n";
  }
  t << "\n" << measured_by(a) << ".\n";
  return 0;
}

// ---- --budget N: a search per problem, then its best kernel and best framework rewrite re-evaluated ---------

// One arm of a problem's search: how many of its candidates were tried and correct, how the others ended,
// and the best one re-evaluated after the search.
struct ArmResult {
  int tried = 0, correct = 0;
  std::map<std::string, int> failures;  // "incorrect [mismatch]" -> count
  uint64_t best = 0;                    // node id; 0 = no correct candidate
  double search_speedup = 0;            // its speedup as measured during the search
  EvalResult retimed;
  bool ok() const { return best != 0 && retimed.status == EvalStatus::ok; }
};

struct ProblemResult {
  std::string name, file;
  EvalResult reference;
  std::string family;             // the kernel template family ("" = none)
  std::string generated, reason;  // the generated kernels' family ("" = none) and how it was found or why none was
  std::string error;              // why the problem was not searched
  int evaluated = 0;
  ArmResult kernel, framework;
};

// The table's family column: the generated kernels' family, or why none was found ("|" kept out of the cell).
std::string family_cell(const ProblemResult& p) {
  std::string cell = !p.generated.empty() ? p.generated : p.reason.empty() ? "–" : "none: " + p.reason;
  std::string out;
  for (char ch : cell) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

// The problem's floor from its reference baseline's roofline: the larger of bytes / measured traffic rate
// and FLOPs / measured matmul rate, in ms, with the one that binds ("memory" or "compute"); 0 when unknown.
std::pair<double, const char*> roofline_floor(const EvalResult& ref) {
  const double memory = ref.peak_gbps > 0 ? ref.roofline_bytes / (ref.peak_gbps * 1e9) * 1e3 : 0;
  const double compute = ref.peak_gflops > 0 ? ref.roofline_flops / (ref.peak_gflops * 1e9) * 1e3 : 0;
  if (memory <= 0 && compute <= 0) return {0, ""};
  return compute > memory ? std::pair{compute, "compute"} : std::pair{memory, "memory"};
}

// "37 %": how close a time is to the floor (the floor's share of it); "–" when either is unknown.
std::string at_floor(double floor_ms, double ms) {
  return floor_ms > 0 && ms > 0 ? fmt(100 * floor_ms / ms, "%.0f") + " %" : std::string("–");
}

// What the best generated kernel of a problem came to, for the table's status column.
std::string kernel_status(const ProblemResult& p) {
  if (!p.error.empty()) return "not searched";
  if (p.family.empty() && p.generated.empty()) return "no kernel family";
  const ArmResult& k = p.kernel;
  if (k.best) return k.ok() ? "ok" : status_text(k.retimed) + " when re-evaluated";
  std::string why;
  for (auto& [s, n] : k.failures) why += (why.empty() ? "" : ", ") + s + " x" + std::to_string(n);
  return "no correct kernel (" + std::to_string(k.tried) + " tried" + (why.empty() ? "" : ": " + why) + ")";
}

// The search of one problem: named by problem, backend, budget, seed and the file's contents (a changed
// file is searched afresh).
std::string file_tag(const ProblemSpec& spec) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the file
  for (unsigned char ch : read_file(spec.file)) h = (h ^ ch) * 1099511628211ull;
  char tag[17];
  std::snprintf(tag, sizeof tag, "%016llx", static_cast<unsigned long long>(h));
  return std::string(tag).substr(0, 8);
}

std::string search_id(const SuiteArgs& a, const ProblemSpec& spec) {
  return "suite-" + spec.name + "-" + a.backend + "-n" + std::to_string(a.budget) + "-s" + std::to_string(a.seed) +
         "-" + file_tag(spec);
}

// Where a problem's reference baseline is kept: by problem file, backend and threads, not by budget or seed
// (a search with another budget reads the same baseline).
std::string reference_id(const SuiteArgs& a, const ProblemSpec& spec) {
  return "suite-reference-" + spec.name + "-" + a.backend + "-t" + std::to_string(a.options.threads) + "-" +
         file_tag(spec);
}

// A finished problem's result, kept in the store with its search (node 0, artifact "suite_result"), so a
// suite cut short and run again goes straight to the problems it had not finished.
constexpr const char* kResultArtifact = "suite_result";
// A problem's reference baseline, kept as soon as it is measured (node 0 of reference_id(), artifact
// "suite_reference"): a suite cut short in the problem's search, or run again with another budget, does not
// measure it again.
constexpr const char* kReferenceArtifact = "suite_reference";

std::string encode_reference(const ProblemResult& p) {
  wire::Writer w;
  w.str("kevolve-suite-reference-1");
  encode(w, p.reference);
  w.str(p.generated);
  w.str(p.reason);
  return std::string(w.bytes().begin(), w.bytes().end());
}

bool decode_reference(const std::string& bytes, ProblemResult& p) {
  const std::vector<char> b(bytes.begin(), bytes.end());
  wire::Reader r(b);
  try {
    if (r.str() != "kevolve-suite-reference-1") return false;
    decode(r, p.reference);
    p.generated = r.str();
    p.reason = r.str();
    return r.done();
  } catch (const wire::DecodeError&) { return false; }
}

// Keeps one artifact of node 0 of search `id` in the store at `path`; says why when it cannot.
void keep_artifact(const std::string& path, const std::string& id, const char* kind, const std::string& bytes,
                   const std::function<void(const std::string&)>& say) {
  auto store = Store::open(path);
  StoreBatch b;
  b.artifacts.push_back({id, {0, kind, bytes}});
  if (!store || !(*store)->write(b))
    say("could not keep the " + std::string(kind) + " in " + path + " (a later run measures it again)");
}

// The scored nodes a search already has in the store at `path` (0 when it has none, or no store yet).
int64_t scored_nodes(const std::string& path, const std::string& id) {
  if (!fs::exists(path)) return 0;
  auto store = Store::open(path, true);
  if (!store) return 0;
  int64_t n = 0;
  for (auto& node : (*store)->nodes(id)) n += node.scored();
  return n;
}

std::string encode_result(const ProblemResult& p) {
  wire::Writer w;
  w.str("kevolve-suite-result-3");
  encode(w, p.reference);
  w.str(p.family);
  w.str(p.generated);
  w.str(p.reason);
  w.i64(p.evaluated);
  for (const ArmResult* arm : {&p.kernel, &p.framework}) {
    w.i64(arm->tried);
    w.i64(arm->correct);
    w.u32(static_cast<uint32_t>(arm->failures.size()));
    for (auto& [what, n] : arm->failures) {
      w.str(what);
      w.i64(n);
    }
    w.i64(static_cast<int64_t>(arm->best));
    w.f64(arm->search_speedup);
    encode(w, arm->retimed);
  }
  return std::string(w.bytes().begin(), w.bytes().end());
}

bool decode_result(const std::string& bytes, ProblemResult& p) {
  const std::vector<char> b(bytes.begin(), bytes.end());
  wire::Reader r(b);
  try {
    // 3: verdicts with their roofline. Results 1 and 2 hold verdicts without it, which this build cannot read:
    // such a problem is evaluated again.
    if (r.str() != "kevolve-suite-result-3") return false;
    decode(r, p.reference);
    p.family = r.str();
    p.generated = r.str();
    p.reason = r.str();
    p.evaluated = static_cast<int>(r.i64());
    for (ArmResult* arm : {&p.kernel, &p.framework}) {
      arm->tried = static_cast<int>(r.i64());
      arm->correct = static_cast<int>(r.i64());
      for (uint32_t i = 0, n = r.u32(); i < n; ++i) {
        std::string what = r.str();
        arm->failures[what] = static_cast<int>(r.i64());
      }
      arm->best = static_cast<uint64_t>(r.i64());
      arm->search_speedup = r.f64();
      decode(r, arm->retimed);
    }
    return r.done();
  } catch (const wire::DecodeError&) { return false; }
}

// What one call of the suite did, for its pace line.
struct SuitePace {
  int64_t evaluations = 0;  // reference baselines, search evaluations and re-evaluations made by this call
  int problems = 0;         // problems worked on by this call (not taken as finished from a store)
};

// The run config of one problem's search in the suite.
RunConfig suite_config(const SuiteArgs& a, const std::string& file, const std::string& id) {
  RunConfig c;
  c.problem = file;
  c.search_id = id;
  c.text = "# kevolve suite --budget " + std::to_string(a.budget) + " --backend " + a.backend + ": " + file + "\n";
  c.backend = backend_traits(kernelbench_backend(parse_backend(a.backend).value_or(BackendKind::cpu))).name;
  c.hardware = resolve_hardware(a.backend, "auto");
  c.warm_start = false;  // every problem's search starts from the module as written, so budgets compare
  c.directed = true;     // kernel mutations follow each parent's diagnosis, as the GPU benchmark searches do
  c.seed = a.seed;
  c.max_in_flight = 2;
  c.build_workers = 1;  // a Python candidate's build only stores its source
  c.strategy.name = "greedy";
  c.strategy.max_children = 4;
  c.budget.max_evaluations = a.budget;
  c.store = a.store;
  c.checkpoint_seconds = 0;
  c.eval = a.options;
  return c;
}

// Counts the scored nodes of the search into p's two arms (kernel, framework rewrite): tried, correct, failures
// by verdict, and each arm's best. The best nodes' sources, by node id.
Expected<std::map<uint64_t, std::string>> count_arms(const std::string& store_path, const std::string& search_id,
                                                     ProblemResult& p) {
  using R = Expected<std::map<uint64_t, std::string>>;
  std::map<uint64_t, std::string> sources;
  auto store = Store::open(store_path, true);
  if (!store) return R::failure("store " + store_path + ": " + store.error());
  for (auto& n : (*store)->nodes(search_id)) {
    if (!n.scored()) continue;
    ++p.evaluated;
    auto impl = n.params.find(KernelBenchOperator::kImpl);
    const bool kernel = impl != n.params.end() && (impl->second == "kernel" || impl->second == "generated");
    ArmResult& arm = kernel ? p.kernel : p.framework;
    ++arm.tried;
    if (!n.correct()) {
      ++arm.failures[std::string(status_name(n.status)) + (n.reason.empty() ? "" : " [" + n.reason + "]")];
      continue;
    }
    ++arm.correct;
    if (!arm.best || n.fitness > arm.search_speedup) {
      arm.best = n.id;
      arm.search_speedup = n.fitness;
      if (auto src = (*store)->artifact(search_id, n.id, "source")) sources[n.id] = *src;
    }
  }
  return sources;
}

// The best of each arm, once more: a fresh, verified measurement (the search's best is biased upward by
// being the best of several), with the evaluator's own label and the torch.compile comparison.
void retime_best(const SuiteArgs& a, const ProblemSpec& spec, const std::map<uint64_t, std::string>& sources,
                 python::PythonBackend& backend, ProblemResult& p, SuitePace& pace,
                 const std::function<void(const std::string&)>& say) {
  for (auto [arm, what] : {std::pair{&p.kernel, "kernel"}, std::pair{&p.framework, "framework rewrite"}}) {
    if (!arm->best || g_interrupted) continue;
    say(std::string("re-evaluating the best ") + what + " (node " + std::to_string(arm->best) + ")");
    const auto src = sources.find(arm->best);  // none when the store had no source for it: evaluated as empty
    arm->retimed =
        backend.evaluate_source(spec, python_candidate(src == sources.end() ? std::string() : src->second), a.options);
    ++pace.evaluations;
    say(std::string("the best ") + what + " re-evaluated: " + status_text(arm->retimed) +
        (arm->retimed.status == EvalStatus::ok ? ", " + fmt(arm->retimed.speedup, "%.3f") + "x over eager" : ""));
    if (arm == &p.kernel && arm->retimed.status == EvalStatus::ok && arm->retimed.kind != "kernel") {
      arm->retimed.status = EvalStatus::rejected;  // the evaluator decides what counts as a generated kernel
      arm->retimed.reason = "label";
    }
  }
}

ProblemResult search_problem(const SuiteArgs& a, const fs::path& file, python::PythonBackend& backend,
                             SuitePace& pace) {
  ProblemResult p;
  const ProblemSpec spec = python::kernelbench_problem(file.string());
  p.name = spec.name;
  p.file = file.string();
  auto say = [&](const std::string& what) { std::cerr << "kevolve suite: " << spec.name << ": " << what << "\n"; };
  const std::string id = search_id(a, spec);
  std::vector<std::string> stores{a.store};
  stores.insert(stores.end(), a.results_from.begin(), a.results_from.end());
  for (auto& path : stores)
    if (fs::exists(path))
      if (auto store = Store::open(path, true))
        if (auto kept = (*store)->artifact(id, 0, kResultArtifact); kept && decode_result(*kept, p)) {
          say("finished earlier (" + id + " in " + path + ")");
          return p;
        }
  ++pace.problems;
  bool measured = false;
  if (fs::exists(a.store))
    if (auto store = Store::open(a.store, true))
      if (auto kept = (*store)->artifact(reference_id(a, spec), 0, kReferenceArtifact);
          kept && decode_reference(*kept, p)) {
        measured = true;
        say("reference baseline measured earlier: " + status_text(p.reference) +
            (p.reference.status == EvalStatus::ok ? ", " + fmt(p.reference.reference.median_ms, "%.4f") + " ms" : ""));
      }
  if (!measured) {
    say("reference baseline");
    p.reference = backend.evaluate_reference(spec, a.options);
    ++pace.evaluations;
    if (p.reference.status == EvalStatus::harness_error)
      if (auto fa = python::analyse_families(p.file)) {  // the family is told even for a problem not searched
        p.generated = fa->family;
        p.reason = fa->reason;
      }
    if (!g_interrupted) keep_artifact(a.store, reference_id(a, spec), kReferenceArtifact, encode_reference(p), say);
  }
  if (p.reference.status == EvalStatus::harness_error) {
    p.error = p.reference.message;
    say("not searched: " + p.error);
    return p;
  }
  auto setup = kernelbench_operator(spec, a.backend, resolve_hardware(a.backend, "auto"), true, true);
  if (!setup) {
    p.error = setup.error();
    say("not searched: " + p.error);
    return p;
  }
  p.family = setup->match.family;
  p.generated = setup->families.family;
  p.reason = setup->families.reason;
  say(setup->note);
  const RunConfig c = suite_config(a, p.file, id);
  say("search of " + std::to_string(a.budget) + " evaluations (" + c.search_id + " in " + a.store + ")");
  EngineOptions eo;
  eo.interrupted = &g_interrupted;
  auto last = std::chrono::steady_clock::now();
  eo.progress = [&](const SearchStatus& s) {
    if (!s.finished && std::chrono::steady_clock::now() - last < std::chrono::seconds(10)) return;
    last = std::chrono::steady_clock::now();
    say("evaluated " + std::to_string(s.evaluated) + " of " + std::to_string(a.budget) + " (correct " +
        std::to_string(s.correct) + "), best " + fmt(s.best_fitness, "%.3f") + "x");
  };
  const int64_t scored_before = scored_nodes(a.store, c.search_id);
  auto status = run_search(c, spec, setup->op, eo);
  if (!status || g_interrupted) {
    p.error = "search: " + (status ? std::string("interrupted") : status.error());
    say(p.error);
    return p;
  }
  pace.evaluations += std::max<int64_t>(0, status->evaluated - scored_before);
  // Every search ends with a line: how it ended, and what it found.
  say("search ended (" + (status->stop_reason.empty() ? std::string("budget spent") : status->stop_reason) +
      "): " + std::to_string(status->evaluated) + " evaluated, " + std::to_string(status->correct) + " correct" +
      (status->correct > 0 ? ", best " + fmt(status->best_fitness, "%.3f") + "x (node " +
                                 std::to_string(status->best_node) + ")"
                           : std::string(", no correct candidate")));
  auto sources = count_arms(a.store, c.search_id, p);
  if (!sources) {
    p.error = sources.error();
    say(p.error);
    return p;
  }
  retime_best(a, spec, *sources, backend, p, pace, say);
  if (g_interrupted) return p;
  keep_artifact(a.store, c.search_id, kResultArtifact, encode_result(p), say);
  return p;
}

struct Geo {
  int n = 0;
  double logsum = 0;
  void add(double x) {
    ++n;
    logsum += std::log(std::max(x, 1e-9));
  }
  std::string text() const { return n ? fmt(std::exp(logsum / n)) + "x" : std::string("–"); }
};

void budget_table(const SuiteArgs& a, const std::vector<ProblemResult>& results, std::ostream& t);

// The GPU's busy share over a suite run: nvidia-smi's utilization.gpu (the share of each sample period in which a
// kernel ran) sampled every second by a reader thread; stop() gives the mean, or says why there is none.
class GpuBusy {
 public:
  GpuBusy() {
    int fds[2];
    if (pipe(fds) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    char* argv[] = {const_cast<char*>("nvidia-smi"), const_cast<char*>("--query-gpu=utilization.gpu"),
                    const_cast<char*>("--format=csv,noheader,nounits"), const_cast<char*>("-lms"),
                    const_cast<char*>("1000"), nullptr};
    const int rc = posix_spawnp(&pid_, "nvidia-smi", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      pid_ = -1;
      return;
    }
    in_ = fdopen(fds[0], "r");
    reader_ = std::thread([this] {
      char line[64];
      while (in_ && std::fgets(line, sizeof line, in_)) {
        char* end = nullptr;
        const double v = std::strtod(line, &end);
        if (end != line) {
          sum_ += v;
          ++n_;
        }
      }
    });
  }
  std::string stop() {
    if (pid_ <= 0) return "GPU busy share: not measured (nvidia-smi could not be started)";
    kill(pid_, SIGTERM);  // its end closes the pipe: the reader sees the end of its samples
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    reader_.join();
    if (in_) fclose(in_);
    in_ = nullptr;
    if (n_ == 0) return "GPU busy share: not measured (nvidia-smi gave no samples)";
    return "GPU busy " + fmt(sum_ / n_, "%.0f") + " % of the run (nvidia-smi utilization.gpu, " + std::to_string(n_) +
           " samples, one a second)";
  }
  ~GpuBusy() {
    if (pid_ > 0) stop();
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  std::thread reader_;
  double sum_ = 0;  // read by stop() after the reader has joined
  int n_ = 0;
};

// Writes `text` to `path` through a temporary file renamed over it: a reader never sees half a table.
bool write_whole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

int run_budget(const SuiteArgs& a, const std::vector<fs::path>& problems, python::PythonBackend& backend,
               std::ostringstream& t) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::vector<ProblemResult> results;
  SuitePace pace;
  const auto started = std::chrono::steady_clock::now();
  std::optional<GpuBusy> gpu;
  if (a.backend == "cuda") gpu.emplace();
  for (auto& f : problems) {
    if (g_interrupted) break;
    results.push_back(search_problem(a, f, backend, pace));
    if (!a.out.empty() && !g_interrupted && results.size() < problems.size()) {
      // The table so far, rewritten as each problem finishes: a long suite shows its results while it runs.
      std::ostringstream partial;
      partial << "Finished " << results.size() << " of " << problems.size()
              << " problems; this table is rewritten as each of the others finishes.\n\n";
      budget_table(a, results, partial);
      if (!write_whole(a.out, partial.str()))
        std::cerr << "kevolve suite: cannot write the table so far to " << a.out << "\n";
    }
  }
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  std::cerr << "kevolve suite: this run: " << pace.problems << " of " << problems.size() << " problems worked on ("
            << problems.size() - static_cast<size_t>(pace.problems) << " finished earlier), " << pace.evaluations
            << " evaluations (baselines, search candidates, re-evaluations) in " << fmt(minutes, "%.1f")
            << " min: " << fmt(minutes > 0 ? pace.evaluations / minutes : 0, "%.1f") << " evaluations per minute"
            << (gpu ? "; " + gpu->stop() : std::string()) << "\n";
  if (g_interrupted) {
    std::cerr << "kevolve suite: interrupted; run the same command again to resume (the searches are in " << a.store
              << ")\n";
    return 130;
  }
  budget_table(a, results, t);
  return 0;
}

// The markdown table of the problems' results and the summary under it.
void budget_table(const SuiteArgs& a, const std::vector<ProblemResult>& results, std::ostream& t) {
  t << "| problem | reference | family | template | kernels correct | best kernel | kernel vs eager | kernel vs "
       "compile | rewrites correct | best rewrite | rewrite vs eager | rewrite vs compile | eager ms | compile ms | floor ms "
       "| eager at floor | compile at floor | kernel at floor |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  const int n = static_cast<int>(results.size());
  int kernels_ok = 0, fast = 0, rewrites_ok = 0, rewrites_fast = 0, references_ok = 0;
  Geo k_eager, k_compile, r_eager, r_compile;
  for (auto& p : results) {
    const bool kok = p.kernel.ok(), rok = p.framework.ok();
    references_ok += p.reference.status == EvalStatus::ok;
    if (kok) {
      ++kernels_ok;
      fast += p.kernel.retimed.speedup > 1.0;
      k_eager.add(p.kernel.retimed.speedup);
      if (p.kernel.retimed.compile_speedup > 0) k_compile.add(p.kernel.retimed.compile_speedup);
    }
    if (rok) {
      ++rewrites_ok;
      rewrites_fast += p.framework.retimed.speedup > 1.0;
      r_eager.add(p.framework.retimed.speedup);
      if (p.framework.retimed.compile_speedup > 0) r_compile.add(p.framework.retimed.compile_speedup);
    }
    auto counts = [&](const ArmResult& arm) {
      return p.error.empty() ? std::to_string(arm.correct) + " of " + std::to_string(arm.tried) : std::string("–");
    };
    const bool kernels = !p.family.empty() || !p.generated.empty();
    t << "| " << p.name << " | " << status_text(p.reference) << " | " << family_cell(p) << " | "
      << (p.family.empty() ? "–" : p.family) << " | " << (kernels ? counts(p.kernel) : "–") << " | " << kernel_status(p)
      << " | " << (kok ? fmt(p.kernel.retimed.speedup) + "x" : "–") << " | "
      << (kok ? vs_compile(p.kernel.retimed) : "–") << " | " << counts(p.framework) << " | "
      << (rok                ? "ok"
          : p.framework.best ? status_text(p.framework.retimed) + " when re-evaluated"
          : p.error.empty()  ? "none correct"
                             : "not searched")
      << " | " << (rok ? fmt(p.framework.retimed.speedup) + "x" : "–") << " | "
      << (rok ? vs_compile(p.framework.retimed) : "–") << " | "
      << (p.reference.status == EvalStatus::ok ? fmt(p.reference.reference.median_ms, "%.4f") : "–") << " | "
      << (p.reference.compiled.median_ms > 0 ? fmt(p.reference.compiled.median_ms, "%.4f") : "–") << " | ";
    const auto [floor_ms, bound] = roofline_floor(p.reference);
    t << (floor_ms > 0 ? fmt(floor_ms, "%.4f") + " " + bound : std::string("–")) << " | "
      << at_floor(floor_ms, p.reference.status == EvalStatus::ok ? p.reference.reference.median_ms : 0) << " | "
      << at_floor(floor_ms, p.reference.compiled.median_ms) << " | "
      << at_floor(floor_ms, kok ? p.kernel.retimed.candidate.median_ms : 0) << " |\n";
  }
  for (auto& p : results)
    if (!p.error.empty())
      t << "\n"
        << p.name << (p.error.find(p.file) == std::string::npos ? " (" + p.file + ")" : std::string())
        << " was not searched: " << p.error << "\n";
  auto share = [&](int k) {
    return std::to_string(k) + " of " + std::to_string(n) + " problems (" + fmt(n ? 100.0 * k / n : 0, "%.0f") + " %)";
  };
  const bool compile_missing = kernels_ok + rewrites_ok > 0 && k_compile.n + r_compile.n == 0;
  t << "\nGenerated kernels (the family's generated kernels and template kernels wrapped as ModelNew; framework "
       "rewrites and the reference never count here):\n"
    << "- correct: " << share(kernels_ok) << "\n"
    << "- fast_1 (the best kernel is correct and faster than eager): " << share(fast) << "\n"
    << "- geometric-mean speedup of the best kernels, over the problems with a correct one (" << kernels_ok
    << "): " << k_eager.text() << " vs eager, " << (compile_missing ? std::string("unavailable") : k_compile.text())
    << " vs torch.compile\n"
    << "\nFramework-level rewrites (counted apart): correct on " << share(rewrites_ok) << ", faster than eager on "
    << rewrites_fast << "; geometric mean " << r_eager.text() << " vs eager, "
    << (compile_missing ? std::string("unavailable") : r_compile.text()) << " vs torch.compile\n"
    << "\nReference baseline (each problem's own Model): correct on " << share(references_ok) << "\n"
    << "\n"
    << measured_by(a) << "; per problem a greedy search of " << a.budget
    << " evaluations with the offline operator (generated family kernels, template kernels, framework rewrites), then "
       "its "
       "best "
       "kernel and best rewrite evaluated once more: the speedups shown are those fresh measurements; eager ms and "
       "compile ms "
       "are the reference's own medians from its baseline evaluation (torch.compile in its default mode, measured once "
       "per problem)"
    << (compile_missing ? "; torch.compile: unavailable (the installed torch has none, or it failed)" : "") << ".\n"
    << "\nRoofline (floor ms, measured with each reference baseline): the larger of the bytes one call moves (its "
       "inputs and outputs) at the measured copy rate (bytes read + written per second) and its FLOPs "
       "(torch.utils.flop_counter: matmuls, convolutions) at the measured matmul rate for its dtype, with the one "
       "that binds; \"at floor\" is the floor's share of that time (100 % = at the hardware's limit).\n";
}

int run_suite(const SuiteArgs& a) {
  if (!fs::is_directory(a.dir)) {
    std::cerr << "kevolve suite: " << a.dir
              << " is not a folder (expected a folder of KernelBench-format .py problems)\n";
    return 2;
  }
  std::vector<fs::path> problems;
  for (auto& e : fs::directory_iterator(a.dir))
    if (e.path().extension() == ".py") problems.push_back(e.path());
  std::sort(problems.begin(), problems.end());
  if (a.shards > 1) {
    std::vector<fs::path> mine;
    for (size_t i = 0; i < problems.size(); ++i)
      if (static_cast<int>(i % static_cast<size_t>(a.shards)) == a.shard) mine.push_back(problems[i]);
    if (mine.empty() && !problems.empty()) {
      std::cerr << "kevolve suite: shard " << a.shard << "/" << a.shards << " of " << a.dir
                << " holds no problem (the folder has " << problems.size() << ")\n";
      return 2;
    }
    problems = std::move(mine);
  }
  if (problems.empty()) {
    std::cerr << "kevolve suite: no .py problems in " << a.dir
              << " (expected files defining Model, get_inputs and get_init_inputs)\n";
    return 2;
  }
  if (!a.candidates.empty() && !fs::is_directory(a.candidates)) {
    std::cerr << "kevolve suite: --candidates " << a.candidates
              << " is not a folder (expected ModelNew files named <problem>__<anything>.py)\n";
    return 2;
  }
  python::PythonBackend backend(a.backend == "cuda" ? "cuda" : "cpu");
  std::ostringstream t;
  const int rc = a.budget > 0 ? run_budget(a, problems, backend, t) : run_given(a, problems, backend, t);
  if (rc != 0) return rc;
  std::cout << t.str();
  if (!a.out.empty() && !write_whole(a.out, t.str())) {
    std::cerr << "kevolve suite: cannot write the table to " << a.out << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_suite_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SuiteArgs>();
  a->options.min_time_s = 0.1;
  auto* cmd = app.add_subcommand(
      "suite", "Run a folder of KernelBench-format problems through the Python interpreter and tabulate");
  cmd->add_option("dir", a->dir, "Folder of KernelBench-format .py problems")->required();
  cmd->add_option("--backend", a->backend, "cpu, or cuda (the GPU through the same Python interpreter)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto* given =
      cmd->add_option("--candidates", a->candidates, "Folder of ModelNew files named <problem-stem>__<anything>.py");
  auto* budget =
      cmd->add_option("--budget", a->budget,
                      "Search each problem with this many evaluations of the offline operator (framework rewrites and "
                      "template kernels), then tabulate its best kernel and best rewrite")
          ->check(CLI::Range(1, 1000000));
  budget->excludes(given);
  cmd->add_option("--store", a->store,
                  "With --budget: the store of the searches; a later run resumes them (default kevolve-suite-store)");
  cmd->add_option("--seed", a->seed, "With --budget: the searches' seed (default 1)");
  cmd->add_option("--out", a->out, "Also write the table (markdown) to this file");
  cmd->add_option_function<std::string>(
         "--shard",
         [a](const std::string& v) {
           int k = -1, n = 0;
           char tail = 0;
           if (std::sscanf(v.c_str(), "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 0 || k >= n)
             throw CLI::ValidationError("--shard", "expected K/N with 0 <= K < N (e.g. 1/2), got '" + v + "'");
           a->shard = k;
           a->shards = n;
         },
         "With --budget: only this share of the problems (K/N: those at sorted positions i with i % N == K), e.g. one "
         "shard per GPU with CUDA_VISIBLE_DEVICES=K and a --store each")
      ->excludes(given);
  cmd->add_option("--results-from", a->results_from,
                  "With --budget: another store (e.g. of another shard) whose finished problems are taken as they are; "
                  "repeatable. A run with every problem finished in one of the stores only writes the table")
      ->excludes(given);
  cmd->add_option("--threads", a->options.threads, "Threads for candidate and reference alike (default: all cores)");
  cmd->add_option("--trials", a->options.trials, "Verification trials per candidate (>= 5)")
      ->check(CLI::Range(5, 1000));
  cmd->add_option("--min-time", a->options.min_time_s, "Seconds of timed runs per side, at least (default 0.1)");
  cmd->footer(
      "Every problem's own Model is run as a candidate too (kind 'reference'): the correct baseline. Kernels and "
      "framework-level rewrites (candidates without kernel code of their own) are counted apart: correct count, fast_1 "
      "and the geometric means are about generated kernels only. With --budget, each problem is searched (resumable "
      "from --store), and the best kernel and the best rewrite of each search are evaluated once more for the table.");
  cmd->callback([a, &exit_code] { exit_code = run_suite(*a); });
}

}  // namespace kevolve::cli
