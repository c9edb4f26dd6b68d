#include "tools/kevolve/commands/bench_command.hpp"
#include "tools/kevolve/commands/directed_bench.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "actors/protocol/run_search.hpp"
#include "tools/kevolve/setup/problem_lookup.hpp"
#include "runtime/core/host_port.hpp"
#include "runtime/core/json.hpp"
#include "runtime/operators/null_operator.hpp"
#include "runtime/search/greedy.hpp"
#include "storage/store.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

// A field of /proc/self/status in kB: VmRSS (resident now) or VmHWM (the highest resident so far).
int64_t status_kb(const char* field) {
  std::ifstream s("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(s, line))
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
  return 0;
}
int64_t rss_kb() { return status_kb("VmRSS"); }

struct Measure {
  double seconds = 0, rate = 0;
  int64_t evaluated = 0, peak_in_flight = 0, rss_start_kb = 0, rss_peak_kb = 0;
  int64_t hwm_kb = 0;  // the process's highest RSS (VmHWM), transient peaks between progress reports included
  bool ok = false;
};

// Runs one null-backend search in a child process (so memory figures do not mix) and measures it.
// `dashboard`: serve the web dashboard while it runs (clients can poll it during the measurement).
Measure measure(const ProblemSpec& spec, const std::string& store, int64_t candidates, int in_flight,
                const dashboard::ServerOptions* dashboard = nullptr) {
  int p[2];
  if (pipe(p) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    RunConfig c;
    c.problem = spec.name;
    c.search_id = "bench";
    c.backend = "null";
    c.op = "null";
    c.max_in_flight = in_flight;
    c.build_workers = 2;
    c.devices = 2;
    c.budget.max_evaluations = candidates;
    c.store = store;
    c.checkpoint_seconds = 0;
    c.strategy.name = "greedy";
    c.strategy.max_children = 16;
    Measure m;
    m.rss_start_kb = rss_kb();
    EngineOptions eo;
    eo.dashboard = dashboard;
    eo.progress = [&](const SearchStatus& s) {
      m.peak_in_flight = std::max(m.peak_in_flight, s.in_flight);
      m.rss_peak_kb = std::max(m.rss_peak_kb, rss_kb());
    };
    const auto t0 = std::chrono::steady_clock::now();
    auto s = run_search(c, spec, std::make_shared<NullOperator>(), eo);
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.ok = static_cast<bool>(s);
    m.evaluated = s ? s->evaluated : 0;
    m.rate = m.seconds > 0 ? static_cast<double>(m.evaluated) / m.seconds : 0;
    m.hwm_kb = status_kb("VmHWM");
    if (write(p[1], &m, sizeof m) != sizeof m) _exit(1);
    _exit(0);
  }
  close(p[1]);
  Measure m;
  if (read(p[0], &m, sizeof m) != sizeof m) m = Measure{};
  close(p[0]);
  waitpid(pid, nullptr, 0);
  return m;
}

// --serve HOST:PORT of kevolve bench engine: the dashboard of the measured run (127.0.0.1 only, with the token
// of $KEVOLVE_DASHBOARD_TOKEN); none when `serve` is empty.
Expected<std::optional<dashboard::ServerOptions>> serve_options(const std::string& serve) {
  using R = Expected<std::optional<dashboard::ServerOptions>>;
  if (serve.empty()) return std::optional<dashboard::ServerOptions>();
  auto addr = parse_host_port(serve, true);
  const char* token = std::getenv("KEVOLVE_DASHBOARD_TOKEN");
  if (!addr || addr->first != "127.0.0.1") return R::failure("--serve takes 127.0.0.1:PORT");
  if (!token || std::string(token).size() < 16)
    return R::failure("--serve needs a token of at least 16 characters in $KEVOLVE_DASHBOARD_TOKEN");
  dashboard::ServerOptions o;
  o.host = addr->first;
  o.port = addr->second;
  o.token = token;
  return std::optional<dashboard::ServerOptions>(std::move(o));
}

// The nodes read from the finished store at `dir` into a graph and strategy, as the search actor resumes.
int64_t resume_load(const std::string& dir) {
  int64_t loaded = 0;
  auto store = Store::open(dir);
  if (!store) return 0;
  SearchGraph g;
  StrategyConfig sc;
  sc.max_children = 16;
  GreedyStrategy strategy(sc);
  const StoredNodes each = [&](bool newest_first, const std::function<void(NodeRecord&)>& visit) {
    return (*store)->each_node("bench", newest_first, [&](NodeRecord& n) {
      ++loaded;
      visit(n);
    });
  };
  if (Status read = load_stored(g, strategy, each, 16384); !read)
    std::cerr << "kevolve bench engine: the resume could not read the store: " << read.text() << "\n";
  return loaded;
}

// measured_only: the measured run alone (no 100-in-flight run, so no bytes per in flight, and no resume step,
// which reads every node into one graph): for sizes where those would take longer than the run itself.
int bench_engine(int64_t candidates, int in_flight, bool as_json, const std::string& serve, bool measured_only) {
  auto dash = serve_options(serve);
  if (!dash) {
    std::cerr << "kevolve bench engine: " << dash.error() << "\n";
    return 2;
  }
  auto spec = resolve_problem("gelu", {});
  if (!spec) {
    std::cerr << "kevolve bench engine: " << spec.error() << "\n";
    return 2;
  }
  char tmpl[] = "/tmp/kevolve-bench-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "kevolve bench engine: cannot create a temporary folder\n";
    return 1;
  }
  const std::string dir = tmpl;
  if (!as_json)
    std::cerr << "kevolve: " << candidates << " candidates through the actor pipeline with up to " << in_flight
              << " in flight (null backend, RocksDB store in " << dir << ")...\n";
  const Measure small = measured_only ? Measure{} : measure(*spec, dir + "/small", candidates, 100);
  const Measure big = measure(*spec, dir + "/big", candidates, in_flight, *dash ? &**dash : nullptr);
  // The engine's own resume: the same search, its budget raised by 1 % (at least 100), continues from the
  // finished store in a fresh process (load_search, then the search actor rebuilds its graph and strategy).
  const int64_t more = std::max<int64_t>(100, candidates / 100);
  const Measure resumed = measured_only ? Measure{} : measure(*spec, dir + "/big", candidates + more, in_flight);
  // Resume: reopen the finished store and load the strategy from it as the search actor does, one record at a
  // time into a graph that keeps a window of the newest 16,384 (actors/search/search_actor.cpp, kGraphWindow).
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t loaded = measured_only ? 0 : resume_load(dir + "/big");
  const double resume_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  fs::remove_all(dir, ec);
  const double per_flight =
      !measured_only && big.peak_in_flight > small.peak_in_flight
          ? 1024.0 *
                static_cast<double>((big.rss_peak_kb - big.rss_start_kb) - (small.rss_peak_kb - small.rss_start_kb)) /
                static_cast<double>(big.peak_in_flight - small.peak_in_flight)
          : 0;
  if (!big.ok || (!measured_only && (!small.ok || !resumed.ok))) {
    std::cerr << "kevolve bench engine: a run failed\n";
    return 1;
  }
  if (as_json) {
    std::cout << "{\"candidates\":" << big.evaluated << ",\"seconds\":" << json::number(big.seconds)
              << ",\"candidates_per_s\":" << json::number(big.rate) << ",\"peak_in_flight\":" << big.peak_in_flight
              << ",\"bytes_per_in_flight\":" << json::number(per_flight) << ",\"peak_rss_kb\":" << big.rss_peak_kb
              << ",\"small_run_candidates_per_s\":" << json::number(small.rate) << ",\"resume_nodes\":" << loaded
              << ",\"resume_s\":" << json::number(resume_s) << ",\"resumed_run_evaluated\":" << resumed.evaluated
              << ",\"resumed_run_seconds\":" << json::number(resumed.seconds)
              << ",\"resumed_run_peak_rss_kb\":" << resumed.rss_peak_kb << ",\"resumed_run_hwm_kb\":" << resumed.hwm_kb
              << ",\"hwm_kb\":" << big.hwm_kb << "}\n";
  } else {
    std::printf("candidates/s:            %.0f (%lld candidates in %.2f s, up to %d in flight)\n", big.rate,
                static_cast<long long>(big.evaluated), big.seconds, in_flight);
    if (!measured_only) std::printf("candidates/s, 100 in flight: %.0f\n", small.rate);
    std::printf("peak in flight (sampled): %lld\n", static_cast<long long>(big.peak_in_flight));
    if (!measured_only)
      std::printf("memory per in flight:    %.0f bytes (peak RSS growth, %d vs 100 in flight)\n", per_flight,
                  in_flight);
    std::printf("peak RSS of the search:  %.1f MiB (sampled with each progress report, %d in flight)\n",
                static_cast<double>(big.rss_peak_kb) / 1024, in_flight);
    if (!measured_only)
      std::printf(
          "resume %lld nodes:       %.3f s (reopen store, read every node once into the strategy's bounded load)\n",
          static_cast<long long>(loaded), resume_s);
    if (!measured_only)
      std::printf(
          "resumed run:             %lld evaluated in %.2f s (the search continued for %lld more), peak RSS "
          "%.1f MiB sampled, %.1f MiB highest (VmHWM, the load included)\n",
          static_cast<long long>(resumed.evaluated), resumed.seconds, static_cast<long long>(more),
          static_cast<double>(resumed.rss_peak_kb) / 1024, static_cast<double>(resumed.hwm_kb) / 1024);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmarks of kevolve itself");
  bench->require_subcommand(1);
  auto* engine =
      bench->add_subcommand("engine", "Candidates/s, in-flight capacity and memory of the actor engine (null backend)");
  auto candidates = std::make_shared<int64_t>(100000);
  auto in_flight = std::make_shared<int>(10000);
  auto as_json = std::make_shared<bool>(false);
  engine->add_option("--candidates", *candidates, "Candidates to push through")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(100), int64_t(100000000)));
  engine->add_option("--in-flight", *in_flight, "Candidates in flight at most")
      ->capture_default_str()
      ->check(CLI::Range(101, 10000000));
  engine->add_flag("--json", *as_json, "Print one JSON object");
  auto serve = std::make_shared<std::string>();
  engine->add_option("--serve", *serve,
                     "Serve the web dashboard on 127.0.0.1:PORT during the measured run (port 0: any free port; "
                     "the token comes from $KEVOLVE_DASHBOARD_TOKEN), to measure the engine with pages open");
  auto measured_only = std::make_shared<bool>(false);
  engine->add_flag("--measured-only", *measured_only,
                   "Only the measured run: no 100-in-flight run (bytes_per_in_flight and small_run_candidates_per_s "
                   "print 0) and no resume step (resume_nodes prints 0); for the largest sizes");
  engine->callback(
      [=, &exit_code] { exit_code = bench_engine(*candidates, *in_flight, *as_json, *serve, *measured_only); });
  add_directed_bench(*bench, exit_code);
}

}  // namespace kevolve::cli
