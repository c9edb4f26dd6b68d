#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/commands/cluster_command.hpp"

#include <atomic>
#include <filesystem>
#include <csignal>
#include <iostream>

#include "actors/cluster/evaluator_node.hpp"
#include "actors/cluster/join.hpp"
#include "actors/engine/engine.hpp"
#include "tools/kevolve/commands/run_command.hpp"
#include "runtime/core/host_port.hpp"
#include "runtime/config/run_config.hpp"
#include "storage/store.hpp"

namespace kevolve::cli {
namespace {
std::vector<std::string> backend_name_list() {
  std::vector<std::string> v;
  for (auto& t : all_backends()) v.push_back(t.name);
  return v;
}
}  // namespace

namespace {

std::atomic<bool> g_stop{false};
void on_stop(int) { g_stop = true; }

// The store's unfinished searches that a console submitted to this node, made ready again from the config
// text they were started with (none when the store does not exist yet). One that cannot be prepared is named
// on stderr and left as it is.
std::vector<PreparedSearch> submitted_searches(const RunConfig& node_config, const std::string& store_override,
                                               const std::vector<PreparedSearch>& already) {
  std::vector<PreparedSearch> out;
  const std::string path = store_override.empty() ? node_config.store : store_override;
  auto st = Store::open(path, /*read_only=*/true);
  if (!st) return out;
  for (const SearchRecord& r : (*st)->searches()) {
    if (!r.submitted || r.finished || r.id == node_config.search_id) continue;
    bool listed = false;
    for (auto& p : already) listed |= p.config.search_id == r.id;
    if (listed) continue;
    auto p = prepare_search_text(r.config_text, "search " + r.id + " (submitted from the console)", store_override);
    if (!p) {
      std::cerr << "kevolve node: cannot resume the submitted search " << r.id << ": " << p.error() << "\n";
      continue;
    }
    p->submitted = true;
    std::cerr << "kevolve node: resuming search " << r.id << ", submitted from the console before the restart\n";
    out.push_back(std::move(*p));
  }
  return out;
}

int node(const std::string& config, const std::string& out, const std::string& store) {
  auto cfg = load_run_config(config);
  if (!cfg) {
    std::cerr << "kevolve node: " << cfg.error() << "\n";
    return 2;
  }
  const auto listen = parse_host_port(cfg->cluster.listen, true);  // validated by the config loader
  ClusterOptions c;
  c.host = listen->first;
  c.port = listen->second;
  auto secret = cluster::secret_from_env(cfg->cluster.secret_env);
  if (!secret) {
    std::cerr << "kevolve node: " << config << ": " << secret.error() << "\n";
    return 2;
  }
  if (secret->size() < 16) {
    std::cerr << "kevolve node: " << config << ": the shared secret in " << cfg->cluster.secret_env
              << " is shorter than 16 characters\n";
    return 2;
  }
  c.secret = *secret;
  c.eval_timeout_s = cfg->cluster.eval_timeout_s;
  c.heartbeat_s = cfg->cluster.heartbeat_s;
  c.tls = {cfg->cluster.tls_cert, cfg->cluster.tls_key, cfg->cluster.tls_ca};
  c.stay = cfg->cluster.stay;
  for (auto& path : cfg->cluster.searches) {
    auto p = prepare_search(path, store);
    if (!p) {
      std::cerr << "kevolve node: " << config << ": cluster.searches: " << p.error() << "\n";
      return 2;
    }
    c.more.push_back(std::move(*p));
  }
  // Searches submitted from the console before the node stopped, unfinished: resumed from their stored config.
  for (auto& p : submitted_searches(*cfg, store, c.more)) c.more.push_back(std::move(p));
  c.prepare = [store](const std::string& path) { return prepare_search(path, store); };
  // Further searches write their reports beside the first one's: <folder of --out>/<search id>.
  const std::filesystem::path out_parent = std::filesystem::path(out).parent_path();
  const std::string root = out.empty() ? "kevolve-out" : out_parent.empty() ? "." : out_parent.string();
  c.on_finished = [root, out, first = cfg->search_id](const RunConfig& rc, const ProblemSpec& spec) {
    const bool is_first = rc.search_id == first;
    write_search_report(rc, spec, is_first && !out.empty() ? out : root + "/" + rc.search_id);
  };
  c.on_listening = [host = c.host](uint16_t port) {
    std::cerr << "kevolve node: listening on " << host << ":" << port << " (evaluators: kevolve evaluator --join "
              << host << ":" << port << "; console: kevolve-console " << host << ":" << port << ")\n";
  };
  return run_config(config, out, store, &c);
}

}  // namespace

void add_cluster_commands(CLI::App& app, int& exit_code) {
  auto* n = app.add_subcommand(
      "node", "Run a search as a cluster coordinator: evaluators join over the network, consoles query it");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  n->add_option("--config", *config,
                "Search config with a [cluster] section (listen, secret_env, eval_timeout, heartbeat)")
      ->required()
      ->check(CLI::ExistingFile);
  n->add_option("--out", *out,
                "Report folder of the config's search (default: kevolve-out/<search id>); further searches write "
                "theirs beside it, named by search id");
  n->add_option("--store", *store, "Store folder (overrides [store] path)");
  n->footer(
      "Only a gatekeeper is published; peers prove the shared secret (HMAC-SHA256 challenge) before they get any other "
      "handle. "
      "Killed, the same command resumes the search from its store and evaluators reconnect by themselves. The search "
      "waits "
      "while no evaluator is attached.");
  n->callback([=, &exit_code] { exit_code = node(*config, *out, *store); });

  auto* e = app.add_subcommand("evaluator", "Join a coordinator's search with this machine's devices");
  auto join = std::make_shared<std::string>();
  auto o = std::make_shared<cluster::EvaluatorOptions>();
  auto secret_env = std::make_shared<std::string>("KEVOLVE_CLUSTER_SECRET");
  e->add_option("--join", *join, "The coordinator, HOST:PORT")->required();
  e->add_option("--backend", o->backend,
                "cpu | cuda | python | python-cuda (KernelBench-format problems) | null (synthetic results, for tests "
                "and benchmarks)")
      ->check(CLI::IsMember(backend_name_list()))
      ->capture_default_str();
  e->add_option("--devices", o->devices, "Devices to offer (each evaluates one candidate at a time)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  e->add_option("--secret-env", *secret_env, "Environment variable that holds the shared secret")
      ->capture_default_str();
  e->add_option("--null-delay-ms", o->null_delay_ms, "null backend: simulated evaluation time")
      ->check(CLI::Range(0.0, 1e6));
  e->add_option("--null-ledger", o->null_ledger,
                "null backend: append \"search node\" per finished evaluation to this file");
  e->add_option("--heartbeat", o->heartbeat_s,
                "Seconds between connection heartbeats (a cut is noticed after 5 missed)")
      ->capture_default_str();
  e->add_option("--tls-cert", o->tls_cert, "TLS: this evaluator's certificate (PEM), signed by the CA the node trusts")
      ->check(CLI::ExistingFile);
  e->add_option("--tls-key", o->tls_key, "TLS: its private key (PEM)")->check(CLI::ExistingFile);
  e->add_option("--tls-ca", o->tls_ca, "TLS: the CA file that signed the node's certificate")->check(CLI::ExistingFile);
  e->add_flag("--stay", o->stay, "Keep waiting for a node when the node finishes or none answers");
  e->add_option("--wait-for-node", o->wait_for_node_s,
                "Seconds without a node to join after which the evaluator leaves (exit 4); 0: never")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  e->footer(
      "Reconnects with back-off (1 s doubling to 30 s) when the coordinator goes away; leaves (exit 0) when the node "
      "says it has finished, unless --stay; leaves (exit 4) after --wait-for-node seconds without a node; a wrong "
      "secret ends it (exit 3).");
  e->callback([=, &exit_code] {
    auto addr = parse_host_port(*join);
    if (!addr) {
      std::cerr << "kevolve evaluator: --join " << addr.error() << "\n";
      exit_code = 2;
      return;
    }
    auto secret = cluster::secret_from_env(*secret_env);
    if (!secret) {
      std::cerr << "kevolve evaluator: " << secret.error() << "\n";
      exit_code = 2;
      return;
    }
    if (TlsFiles{o->tls_cert, o->tls_key, o->tls_ca}.partial()) {
      std::cerr << "kevolve evaluator: TLS needs --tls-cert, --tls-key and --tls-ca together (without a CA the node is "
                   "not authenticated)\n";
      exit_code = 2;
      return;
    }
    cluster::EvaluatorOptions opt = *o;
    opt.host = addr->first;
    opt.port = addr->second;
    opt.secret = *secret;
    opt.stop = &g_stop;
    std::signal(SIGINT, on_stop);
    std::signal(SIGTERM, on_stop);
    cluster::run_evaluator(opt);  // does not return
  });
}

}  // namespace kevolve::cli
