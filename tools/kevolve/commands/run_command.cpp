#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/commands/run_command.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>

#include "actors/protocol/run_search.hpp"
#include "backends/backend.hpp"
#include "backends/device_info.hpp"
#include "knowledge/template_library.hpp"
#include "tools/kevolve/setup/kernelbench_setup.hpp"
#include "tools/kevolve/setup/problem_lookup.hpp"
#include "tools/kevolve/report/report_writer.hpp"
#include "knowledge/hardware_profile.hpp"
#include "knowledge/knowledge_base.hpp"
#include "runtime/operators/llm_operator.hpp"
#include "runtime/operators/null_operator.hpp"
#include "runtime/operators/replay_operator.hpp"
#include "storage/store.hpp"
#include "runtime/operators/template_operator.hpp"
#include "runtime/config/run_config.hpp"
#include "runtime/core/host_port.hpp"

namespace kevolve::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_checkpoint{false};
void on_signal(int) { g_interrupted = true; }
void on_usr1(int) { g_checkpoint = true; }

// The universal operator for `operator = "llm"`: checks the key and that the endpoint answers at all, then
// loads the prompt templates, the knowledge base and the target's constraints.
Expected<std::shared_ptr<Operator>> make_llm_operator(const RunConfig& c, const ProblemSpec& spec) {
  using R = Expected<std::shared_ptr<Operator>>;
  auto client = llm::LlmClient::create(c.llm);
  if (!client) return R::failure(client.error());
  auto url = llm::parse_url(c.llm.endpoint);
  if (auto err = llm::probe(*url, 10); !err.empty()) return R::failure("llm.endpoint: " + err);
  std::string root;
  for (auto& r : default_knowledge_roots())
    if (std::filesystem::is_directory(r + "/prompts")) {
      root = r;
      break;
    }
  if (root.empty()) return R::failure("cannot find the knowledge folder (prompts/) — set KEVOLVE_KNOWLEDGE");
  auto prompts = PromptTemplates::load(root);
  if (!prompts) return R::failure(prompts.error());
  auto kb = KnowledgeBase::load(root);
  if (!kb) return R::failure(kb.error());
  auto hw = load_hardware(root, c.hardware);
  if (!hw) return R::failure("search.hardware: " + hw.error());
  // A GPU search names this machine's GPU until the first verdict describes the device that evaluates.
  std::string machine;
  if (std::string_view(backend_traits(c.backend).device) == "cuda")
    if (const std::string gpu = device_model(c.backend, 0); !gpu.empty())
      machine = gpu +
                " (this machine's first GPU; its SMs, L2 and measured copy bandwidth follow the first "
                "evaluated kernel)";
  auto op = std::make_shared<LlmOperator>(
      LlmOperatorSetup{*client, *prompts, spec, spec.description + " (PyTorch reference: " + spec.reference + ")",
                       c.hardware, hw->text, *kb, c.llm_concurrency, c.backend, c.eval.threads, machine});
  if (!c.llm_kernel_language.empty()) {
    if (!op->kernelbench())
      return R::failure("llm.kernel_language: applies to KernelBench-format (.py) problems; " + spec.name +
                        " is a core problem, whose "
                        "kernels are written for the " +
                        c.backend + " backend's ABI");
    if (c.backend == "python" && c.llm_kernel_language != "cpp")
      return R::failure("llm.kernel_language: '" + c.llm_kernel_language +
                        "' needs the GPU (backend = \"cuda\"); on the CPU ModelNew's "
                        "kernels are C++ (cpp)");
    op->set_kernel_language(c.llm_kernel_language);
  }
  return R(op);
}

// The nodes of a recorded search, in order, with their sources, prompts and replies.
Expected<std::vector<RecordedNode>> load_recording(const std::string& store_path, const std::string& search) {
  using R = Expected<std::vector<RecordedNode>>;
  auto store = Store::open(store_path, true);
  if (!store) return R::failure("search.replay_store: " + store.error());
  if (auto rec = (*store)->search(search); !rec) return R::failure("search.replay_search: " + rec.error());
  std::vector<RecordedNode> out;
  for (auto& n : (*store)->nodes(search)) {
    RecordedNode r;
    r.id = n.id;
    if (auto s = (*store)->artifact(search, n.id, "source")) r.source = *s;
    if (auto p = (*store)->artifact(search, n.id, "prompt")) r.prompt = *p;
    if (auto y = (*store)->artifact(search, n.id, "reply")) r.reply = *y;
    out.push_back(std::move(r));
  }
  if (out.empty()) return R::failure("search.replay_search: '" + search + "' has no recorded nodes");
  return out;
}

EvalOptions retime_options(const RunConfig& c) {
  EvalOptions o = c.eval;
  o.min_time_s = c.retime_min_time;
  o.min_reps = std::max(o.min_reps, 50);
  o.max_reps = std::max(o.max_reps, 5000);
  return o;
}

int report(const RunConfig& c, const ProblemSpec& spec, const std::string& out) {
  const int retime = backend_traits(c.backend).evaluates ? c.retime_top : 0;
  if (retime > 0)
    std::cerr << "kevolve: re-timing the best " << retime << " candidates and writing the report to " << out << "\n";
  else
    std::cerr << "kevolve: writing the report to " << out << "\n";
  // KEVOLVE_NSIGHT=0 leaves out the Nsight Compute profile of the best CUDA kernel (it replays the kernel).
  const char* nsight = std::getenv("KEVOLVE_NSIGHT");
  auto r = write_report(
      {c.store, c.search_id, out, spec, c.backend, retime, retime_options(c), !(nsight && std::string(nsight) == "0")});
  if (!r) {
    std::cerr << "kevolve: report: " << r.error() << "\n";
    return 1;
  }
  std::cout << "search " << c.search_id << ": " << r->evaluated << " evaluated, " << r->correct << " correct, "
            << r->failed << " failed\n";
  if (r->best_node && !backend_traits(c.backend).evaluates)
    std::cout << "best: node " << r->best_node << ", synthetic fitness " << r->best_speedup
              << " (null backend: nothing was run)\n";
  else if (r->best_node && retime > 0)
    std::cout << "best: node " << r->best_node << ", " << r->best_speedup << "x over libtorch (re-timed; "
              << r->search_speedup << "x during the search)\n";
  else if (r->best_node)
    std::cout << "best: node " << r->best_node << ", " << r->search_speedup
              << "x over libtorch (as measured during the search; "
              << "retime_top = 0)\n";
  else
    std::cout << "no correct kernel was found\n";
  std::cout << "report: " << out << "/report.json, " << out << "/report.html, " << out << "/best/\n";
  return 0;
}

}  // namespace

Expected<PreparedSearch> prepare_search(const std::string& config_path, const std::string& store_override) {
  auto cfg = load_run_config(config_path);
  if (!cfg) return Expected<PreparedSearch>::failure(cfg.error());
  return prepare_config(*cfg, config_path, store_override);
}

Expected<PreparedSearch> prepare_search_text(const std::string& text, const std::string& origin,
                                             const std::string& store_override) {
  auto cfg = parse_run_config(text, origin);
  if (!cfg) return Expected<PreparedSearch>::failure(cfg.error());
  return prepare_config(*cfg, origin, store_override);
}

Expected<PreparedSearch> prepare_config(RunConfig c, const std::string& config_path,
                                        const std::string& store_override) {
  using R = Expected<PreparedSearch>;
  if (!store_override.empty()) c.store = store_override;
  c.hardware = resolve_hardware(c.backend, c.hardware);
  auto spec = resolve_problem(c.problem, {});
  if (!spec) return R::failure(config_path + ": search.problem: " + spec.error());
  const std::string device = c.backend;  // for a KernelBench-format problem: the language of template kernels
  if (spec->reference == "python" && (c.backend == "cpu" || c.backend == "cuda")) {  // a KernelBench-format problem
    c.backend = backend_traits(kernelbench_backend(*parse_backend(c.backend))).name;
    if (!c.template_name.empty() && c.template_name != "rewrite")
      return R::failure(
          config_path + ": search.template: '" + c.template_name +
          "' (for a KernelBench-format problem: \"rewrite\" for framework rewrites only, or unset for rewrites and "
          "template kernels)");
  }
  std::shared_ptr<Operator> op;
  if (c.op == "null") {
    op = std::make_shared<NullOperator>();
  } else if (c.op == "replay") {
    auto recorded = load_recording(c.replay_store, c.replay_search);
    if (!recorded) return R::failure(config_path + ": " + recorded.error());
    op = std::make_shared<ReplayOperator>(std::move(*recorded));
  } else if (c.op == "llm") {
    auto made = make_llm_operator(c, *spec);
    if (!made) return R::failure(config_path + ": " + made.error());
    op = *made;
  } else if (backend_traits(c.backend).kernelbench) {
    // Framework rewrites of the problem's module and, where it computes one operator of a template family,
    // that template's kernels wrapped as ModelNew.
    auto s = kernelbench_operator(*spec, device, c.hardware, c.template_name.empty(), c.directed);
    if (!s) return R::failure(config_path + ": " + s.error());
    std::cerr << "kevolve: " << spec->name << ": " << s->note << "\n";
    op = s->op;
  } else {
    auto t = find_template(c.backend == "cuda" || c.backend == "hip" ? c.backend : "cpu",
                           c.template_name.empty() ? spec->name : c.template_name, default_knowledge_roots());
    if (!t) return R::failure(t.error());
    auto hw = load_hardware(fs::path(t->dir).parent_path().parent_path().parent_path().string(), c.hardware);
    if (!hw) return R::failure(config_path + ": search.hardware: " + hw.error());
    t->hardware = hw->numbers;
    auto top = std::make_shared<TemplateOperator>(*t);
    if (c.directed) top->follow_directives(*spec);
    op = top;
  }
  return PreparedSearch{c, *spec, op};
}

namespace {

// The dashboard's options from the config's [dashboard] (and [cluster] tls_cert / tls_key) or `--serve`;
// none when neither asks for one. Errors name the key or the option.
Expected<std::optional<dashboard::ServerOptions>> dashboard_options(const RunConfig& c, const std::string& serve) {
  using R = Expected<std::optional<dashboard::ServerOptions>>;
  const std::string listen = serve.empty() ? c.dashboard.listen : serve;
  if (listen.empty()) return R(std::nullopt);
  const std::string what = serve.empty() ? c.file + ": dashboard.listen" : "--serve";
  const bool tls = !c.cluster.tls_cert.empty() && !c.cluster.tls_key.empty();
  if (auto ok = check_dashboard_address(listen, tls, c.dashboard.allow_plain_http); !ok)
    return R::failure(ok.code, what + ": " + ok.message);
  const char* token = std::getenv(c.dashboard.token_env.c_str());
  if (!token || std::string(token).size() < 16)
    return R::failure(Errc::invalid_argument, what +
                                                  ": the dashboard needs an access token of at least 16 characters "
                                                  "in $" +
                                                  c.dashboard.token_env + " ([dashboard] token_env)");
  dashboard::ServerOptions o;
  auto addr = parse_host_port(listen, true);
  o.host = addr->first;
  o.port = addr->second;
  o.token = token;
  if (tls) {
    o.tls_cert = c.cluster.tls_cert;
    o.tls_key = c.cluster.tls_key;
  }
  return R(o);
}

int run(const std::string& config_path, std::string out, const std::string& store_override,
        const ClusterOptions* cluster, const std::string& serve = "") {
  auto prepared = prepare_search(config_path, store_override);
  if (!prepared) {
    std::cerr << "kevolve run: " << prepared.error() << "\n";
    return 2;
  }
  const RunConfig c = prepared->config;
  const ProblemSpec* spec = &prepared->spec;
  if (const std::string why = cluster ? std::string() : backend_unavailable(c.backend); !why.empty()) {
    std::cerr << "kevolve run: backend " << c.backend << ": harness_error: " << why << "\n";  // before any search
    return 3;
  }
  std::shared_ptr<Operator> op = prepared->op;
  if (out.empty()) out = "kevolve-out/" + c.search_id;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGUSR1, on_usr1);
  const bool tty = isatty(2);
  const auto started = std::chrono::steady_clock::now();
  auto last_print = started - std::chrono::seconds(10);
  EngineOptions eo;
  eo.interrupted = &g_interrupted;
  eo.checkpoint_now = &g_checkpoint;
  eo.cluster = cluster;
  auto dash = dashboard_options(c, serve);
  if (!dash) {
    std::cerr << "kevolve run: " << dash.error() << "\n";
    return 2;
  }
  if (*dash) eo.dashboard = &**dash;
  eo.progress = [&](const SearchStatus& s) {
    const auto now = std::chrono::steady_clock::now();
    if (!tty && now - last_print < std::chrono::seconds(5) && !s.finished) return;
    last_print = now;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: evaluated %lld (correct %lld, failed %lld) | in flight %lld | best %.3fx (node %llu) | %.2f/s",
                  s.search.c_str(), static_cast<long long>(s.evaluated), static_cast<long long>(s.correct),
                  static_cast<long long>(s.failed), static_cast<long long>(s.in_flight), s.best_fitness,
                  static_cast<unsigned long long>(s.best_node), s.rate);
    // How long is left: the evaluations still to make at the rate so far, or the time budget, whichever is first.
    std::string left;
    const int64_t to_go = c.budget.max_evaluations - s.evaluated;
    double secs = s.rate > 0 && to_go > 0 ? static_cast<double>(to_go) / s.rate : -1;
    if (c.budget.max_seconds > 0) {
      const double cap = c.budget.max_seconds - std::chrono::duration<double>(now - started).count();
      if (secs < 0 || cap < secs) secs = std::max(0.0, cap);
    }
    if (!s.finished && secs >= 0)
      left = secs >= 90 ? " | about " + std::to_string(static_cast<int>(secs / 60 + 0.5)) + " min left"
                        : " | about " + std::to_string(static_cast<int>(secs + 0.5)) + " s left";
    std::string llm;  // the provider's side: requests in flight and waiting, a back-off with its end, tokens, cost
    if (auto* l = dynamic_cast<LlmOperator*>(op.get()))
      llm = " | " + llm::describe_live(l->live(), c.llm.cost_per_mtok_in > 0 || c.llm.cost_per_mtok_out > 0);
    std::cerr << (tty ? "\r\033[K" : "") << line << left << llm << (tty ? "" : "\n") << std::flush;
  };
  std::cerr << "kevolve: search " << c.search_id << " on " << spec->name << " (" << c.strategy.name << ", " << c.backend
            << " backend), store " << c.store << "\n";
  auto status = run_search(c, *spec, op, eo);
  if (auto* l = dynamic_cast<LlmOperator*>(op.get())) {
    const auto u = l->usage();
    std::cerr << (tty ? "\n" : "") << "kevolve: LLM " << c.llm.model << ": " << u.requests << " requests ("
              << u.failures << " failed, " << u.retries << " retries, " << l->unusable_replies() << " unusable), "
              << u.input_tokens << " input (" << u.cache_read_tokens << " cache read, " << u.cache_creation_tokens
              << " cache write) + " << u.output_tokens << " output + " << u.estimated_tokens
              << " estimated tokens, cost " << u.cost << "\n";
  }
  if (tty) std::cerr << "\n";
  if (!status) {
    std::cerr << "kevolve run: " << status.error() << "\n";
    return g_interrupted ? 130 : 1;
  }
  std::cerr << "kevolve: finished: " << status->stop_reason << "\n";
  const int written = report(c, *spec, out);
  if (auto* l = dynamic_cast<LlmOperator*>(op.get()); l && !l->fatal().empty()) {
    std::cerr << "kevolve run: the search stopped on an LLM error: " << l->fatal() << "\n";
    return written ? written : 3;  // the report is written, but the run did not do its work
  }
  return written;
}

}  // namespace

int write_search_report(const RunConfig& c, const ProblemSpec& spec, const std::string& out) {
  return report(c, spec, out);
}

int run_config(const std::string& config_path, std::string out, const std::string& store_override,
               const ClusterOptions* cluster) {
  return run(config_path, std::move(out), store_override, cluster);
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run (or resume) a kernel search described by a TOML config");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  cmd->add_option("config", *config, "Search config (see configs/quickstart.toml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", *out, "Report folder (default: kevolve-out/<search id>)");
  cmd->add_option("--store", *store, "Store folder (overrides [store] path)");
  auto serve = std::make_shared<std::string>();
  cmd->add_option("--serve", *serve,
                  "Serve the web dashboard on HOST:PORT while the search runs (port 0: any free port; overrides "
                  "[dashboard] listen; the token comes from $KEVOLVE_DASHBOARD_TOKEN or [dashboard] token_env)");
  cmd->footer(
      "Interrupted or killed, the same command resumes the search from its store: scored candidates are kept, "
      "candidates in flight are evaluated again. `kill -USR1 <pid>` takes a store checkpoint now "
      "(into <store>.checkpoints/; the two newest are kept).");
  cmd->callback([=, &exit_code] { exit_code = run(*config, *out, *store, nullptr, *serve); });
}

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Write the report of a stored search (works while the search runs)");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  cmd->add_option("config", *config, "The search's config")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", *out, "Report folder (default: kevolve-out/<search id>)");
  cmd->add_option("--store", *store, "Store folder (overrides [store] path)");
  cmd->callback([=, &exit_code] {
    auto cfg = load_run_config(*config);
    if (!cfg) {
      std::cerr << "kevolve report: " << cfg.error() << "\n";
      exit_code = 2;
      return;
    }
    RunConfig c = *cfg;
    if (!store->empty()) c.store = *store;
    auto spec = resolve_problem(c.problem, {});
    if (!spec) {
      std::cerr << "kevolve report: " << spec.error() << "\n";
      exit_code = 2;
      return;
    }
    // The whole store is read first (checksums and every record): a report over a damaged store says so and
    // exits 1, instead of tabulating what happened to be readable as if it were all.
    std::vector<std::string> damage;
    if (auto st = Store::open(c.store, /*read_only=*/true)) damage = (*st)->verify().problems;
    exit_code = report(c, *spec, out->empty() ? "kevolve-out/" + c.search_id : *out);
    if (!damage.empty()) {
      for (auto& d : damage) std::cerr << "kevolve report: store " << c.store << ": " << d << "\n";
      std::cerr << "kevolve report: the store is damaged; the figures above may leave out what could not be read "
                   "(kevolve store verify names it, kevolve store repair recovers what can be read)\n";
      exit_code = 1;
    }
  });
}

}  // namespace kevolve::cli
