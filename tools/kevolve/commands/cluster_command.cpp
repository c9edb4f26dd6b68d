#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/commands/cluster_command.hpp"

#include <atomic>
#include <filesystem>
#include <csignal>
#include <iostream>
#include <unistd.h>

#include "actors/protocol/run_evaluator.hpp"
#include "runtime/net/peer_proof.hpp"
#include "actors/protocol/run_search.hpp"
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

// A console's `submit PATH` names a file on the node's machine, which the node (often root) would open: only
// a regular .toml file whose real path lies inside one of `dirs` is taken, checked before anything is read.
Status allowed_submission(const std::string& path, const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  std::string where;
  for (auto& d : dirs) {
    std::error_code ec2;
    const fs::path root = fs::weakly_canonical(fs::absolute(d, ec2), ec2);
    where += (where.empty() ? "" : ", ") + root.string();
    if (ec || ec2) continue;
    auto rel = real.lexically_relative(root);
    if (rel.empty() || rel.native().rfind("..", 0) == 0) continue;
    if (real.extension() != ".toml")
      return Status::failure(Errc::invalid_argument, "submit takes a search config (.toml), not '" + path + "'");
    if (!fs::is_regular_file(real, ec2))
      return Status::failure(Errc::invalid_argument, "no config file at '" + path + "' (" + real.string() + ")");
    return Status::success();
  }
  return Status::failure(Errc::invalid_argument, "'" + path + "' is outside the folders this node takes submissions from (" +
                                            where + "; [cluster] submit_dirs)");
}

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
  const auto evaluator_key = net::key_from_env(cfg->cluster.evaluator_key_env);
  const auto console_key = net::key_from_env(cfg->cluster.console_key_env);
  for (auto* k : {&evaluator_key, &console_key})
    if (!k->error.empty()) {
      std::cerr << "kevolve node: " << config << ": " << (k == &evaluator_key ? "the evaluators' key: " : "the consoles' key: ")
                << k->error << " ([cluster] " << (k == &evaluator_key ? "evaluator_key_env" : "console_key_env") << ")\n";
      return 2;
    }
  if (evaluator_key.key == console_key.key) {
    std::cerr << "kevolve node: " << config << ": " << cfg->cluster.evaluator_key_env << " and "
              << cfg->cluster.console_key_env
              << " hold the same key: give each role its own, so that an evaluator machine cannot run console "
                 "commands\n";
    return 2;
  }
  c.keys = {evaluator_key.key, console_key.key};
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
  c.prepare = [store, dirs = cfg->cluster.submit_dirs](const std::string& path) -> Expected<PreparedSearch> {
    if (auto ok = allowed_submission(path, dirs); !ok) return Expected<PreparedSearch>::failure(ok);
    return prepare_search(path, store);
  };
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

// kevolve node: a search as the cluster's coordinator.
void add_node_command(CLI::App& app, int& exit_code) {
  auto* n = app.add_subcommand(
      "node", "Run a search as a cluster coordinator: evaluators join over the network, consoles query it");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  n->add_option("--config", *config,
                "Search config with a [cluster] section (listen, evaluator_key_env, console_key_env, eval_timeout, "
                "heartbeat, tls_*, submit_dirs)")
      ->required()
      ->check(CLI::ExistingFile);
  n->add_option("--out", *out,
                "Report folder of the config's search (default: kevolve-out/<search id>); further searches write "
                "theirs beside it, named by search id");
  n->add_option("--store", *store, "Store folder (overrides [store] path)");
  n->footer(
      "Its one listening socket speaks only to peers that prove their role's key (evaluators "
      "$KEVOLVE_EVALUATOR_KEY, consoles $KEVOLVE_CONSOLE_KEY) and proves the same key back; see docs/cluster.md. "
      "Killed, the same command resumes the search from its store and evaluators reconnect by themselves. The search "
      "waits "
      "while no evaluator is attached.");
  n->callback([=, &exit_code] { exit_code = node(*config, *out, *store); });
}

// kevolve evaluator: this machine's devices join a coordinator's search.
void add_evaluator_command(CLI::App& app, int& exit_code) {
  auto* e = app.add_subcommand("evaluator", "Join a coordinator's search with this machine's devices");
  auto join = std::make_shared<std::string>();
  auto o = std::make_shared<cluster::EvaluatorOptions>();
  auto secret_env = std::make_shared<std::string>("KEVOLVE_EVALUATOR_KEY");
  e->add_option("--join", *join, "The coordinator, HOST:PORT")->required();
  e->add_option("--backend", o->backend,
                "cpu | cuda | python | python-cuda (KernelBench-format problems) | null (synthetic results, for tests "
                "and benchmarks)")
      ->check(CLI::IsMember(backend_name_list()))
      ->capture_default_str();
  e->add_option("--devices", o->devices, "Devices to offer (each evaluates one candidate at a time)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  e->add_option("--key-env", *secret_env, "Environment variable that holds the evaluators' key (the node's "
                "[cluster] evaluator_key_env)")
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
  e->add_option("--tls-server-name", o->tls_server_name,
                "TLS: the name the node's certificate must carry (default: the host of --join)");
  e->add_flag("--stay", o->stay, "Keep waiting for a node when the node finishes or none answers");
  e->add_option("--wait-for-node", o->wait_for_node_s,
                "Seconds without a node to join after which the evaluator leaves (exit 4); 0: never")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  e->footer(
      "Reconnects with back-off (1 s doubling to 30 s) when the coordinator goes away; leaves (exit 0) when the node "
      "says it has finished, unless --stay; leaves (exit 4) after --wait-for-node seconds without a node; a wrong "
      "key, or a device the node refuses, ends it (exit 3). A node that cannot prove the key back is not joined.");
  e->callback([=, &exit_code] {
    auto addr = parse_host_port(*join);
    if (!addr) {
      std::cerr << "kevolve evaluator: --join " << addr.error() << "\n";
      exit_code = 2;
      return;
    }
    const auto secret = net::key_from_env(*secret_env);
    if (!secret.error.empty()) {
      std::cerr << "kevolve evaluator: the evaluators' key: " << secret.error << " (--key-env)\n";
      exit_code = 2;
      return;
    }
    char here[256] = {0};
    gethostname(here, sizeof here - 1);
    const auto credential = net::evaluator_credential(secret.key, here);
    if (!credential.error.empty()) {
      std::cerr << "kevolve evaluator: " << *secret_env << ": " << credential.error << "\n";
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
    opt.secret = credential.key;
    opt.host_name = credential.host;
    opt.stop = &g_stop;
    std::signal(SIGINT, on_stop);
    std::signal(SIGTERM, on_stop);
    cluster::run_evaluator(opt);  // does not return
  });
}

// kevolve evaluator-key: one machine's key, derived from the cluster's evaluator key.
void add_evaluator_key_command(CLI::App& app, int& exit_code) {
  auto* k = app.add_subcommand("evaluator-key",
                               "Print one machine's evaluator key (host:NAME:KEY), derived from the cluster's evaluator "
                               "key in $KEVOLVE_EVALUATOR_KEY: give each evaluator machine only its own");
  auto key_host = std::make_shared<std::string>();
  k->add_option("HOST", *key_host, "The machine's host name, as `hostname` prints it there")->required();
  k->footer(
      "An evaluator started with this value in KEVOLVE_EVALUATOR_KEY registers devices of that host only; "
      "with the cluster's key itself it derives its own host's key.");
  k->callback([=, &exit_code] {
    const auto secret = net::key_from_env("KEVOLVE_EVALUATOR_KEY");
    if (!secret.error.empty()) {
      std::cerr << "kevolve evaluator-key: " << secret.error << "\n";
      exit_code = 2;
      return;
    }
    if (secret.key.rfind("host:", 0) == 0 || !net::valid_host_name(*key_host)) {
      std::cerr << "kevolve evaluator-key: "
                << (secret.key.rfind("host:", 0) == 0 ? "KEVOLVE_EVALUATOR_KEY holds a host key, not the cluster's"
                                                      : "'" + *key_host + "' is not a host name")
                << "\n";
      exit_code = 2;
      return;
    }
    std::cout << "host:" << *key_host << ":" << net::host_key(secret.key, *key_host) << "\n";
    exit_code = 0;
  });
}

}  // namespace

void add_cluster_commands(CLI::App& app, int& exit_code) {
  add_node_command(app, exit_code);
  add_evaluator_command(app, exit_code);
  add_evaluator_key_command(app, exit_code);
}

}  // namespace kevolve::cli
