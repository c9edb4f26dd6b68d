#include "runtime/records/backend_kind.hpp"
#include "runtime/config/run_config.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "runtime/core/host_port.hpp"

namespace kevolve {
namespace {

struct ConfigError {
  std::string text;
};

class Reader {
 public:
  Reader(const toml::table& t, std::string file) : t_(t), file_(std::move(file)) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError{file_ + ": key '" + key + "': " + what};
  }
  const toml::table* table(const char* name, std::set<std::string> allowed) const {
    auto n = t_.get(name);
    if (!n) return nullptr;
    auto tt = n->as_table();
    if (!tt) fail(name, "expected a table [" + std::string(name) + "]");
    for (auto&& [k, v] : *tt) {
      (void)v;
      if (!allowed.count(std::string(k.str()))) {
        std::string list;
        for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(std::string(name) + "." + std::string(k.str()), "unknown key (expected one of: " + list + ")");
      }
    }
    return tt;
  }
  void get(const toml::table* t, const char* sec, const char* key, std::string& out) const {
    if (!t || !t->contains(key)) return;
    auto v = (*t)[key].value<std::string>();
    if (!v) fail(std::string(sec) + "." + key, "expected a string");
    out = *v;
  }
  template <class N>
  void get(const toml::table* t, const char* sec, const char* key, N& out, double lo, double hi) const {
    if (!t || !t->contains(key)) return;
    auto node = (*t)[key];
    std::optional<double> v;
    if (node.is_integer())
      v = static_cast<double>(*node.value<int64_t>());
    else if (node.is_floating_point())
      v = *node.value<double>();
    const std::string k = std::string(sec) + "." + key;
    if (!v) fail(k, "expected a number");
    if (!(*v >= lo && *v <= hi)) {  // nan is refused too
      std::ostringstream os;
      os << "expected a number from " << lo << " to " << hi << " (got " << *v << ")";
      fail(k, os.str());
    }
    if constexpr (std::is_integral_v<N>) {
      if (*v != static_cast<double>(static_cast<int64_t>(*v))) fail(k, "expected an integer");
    }
    out = static_cast<N>(*v);
  }
  void get(const toml::table* t, const char* sec, const char* key, bool& out) const {
    if (!t || !t->contains(key)) return;
    auto v = (*t)[key].value<bool>();
    if (!v) fail(std::string(sec) + "." + key, "expected true or false");
    out = *v;
  }

 private:
  const toml::table& t_;
  std::string file_;
};

// [search]: the problem, backend, operator and how the search runs.
void read_search(const Reader& r, RunConfig& c) {
  auto s = r.table("search", {"problem", "id", "backend", "operator", "template", "hardware", "replay_store",
                              "replay_search", "directed", "warm_start", "seed", "max_in_flight", "build_workers",
                              "devices", "retime_top", "retime_min_time", "device_class"});
  if (!s) r.fail("search", "missing (expected a [search] table with at least problem = \"NAME\")");
  r.get(s, "search", "problem", c.problem);
  if (c.problem.empty()) r.fail("search.problem", "missing (expected a problem name such as \"rmsnorm_fwd\")");
  r.get(s, "search", "id", c.search_id);
  r.get(s, "search", "backend", c.backend);
  if (!parse_backend(c.backend)) r.fail("search.backend", "'" + c.backend + "' (expected " + backend_names() + ")");
  r.get(s, "search", "operator", c.op);
  r.get(s, "search", "template", c.template_name);
  r.get(s, "search", "hardware", c.hardware);
  r.get(s, "search", "directed", c.directed);
  r.get(s, "search", "warm_start", c.warm_start);
  r.get(s, "search", "replay_store", c.replay_store);
  r.get(s, "search", "replay_search", c.replay_search);
  if (c.op != "template" && c.op != "null" && c.op != "llm" && c.op != "replay")
    r.fail("search.operator", "'" + c.op + "' (expected template, llm, replay, or null with the null backend)");
  if (c.op == "replay" && (c.replay_store.empty() || c.replay_search.empty()))
    r.fail("search.replay_store",
           "operator = \"replay\" needs replay_store (a store path) and replay_search (a search id)");
  if (c.op == "null" && !is_backend(c.backend, BackendKind::null))
    r.fail("search.operator", "the null operator makes no real kernels; use it only with backend = \"null\"");
  r.get(s, "search", "seed", c.seed, 0, 9e15);
  r.get(s, "search", "max_in_flight", c.max_in_flight, 1, 1e6);
  r.get(s, "search", "build_workers", c.build_workers, 0, 256);
  r.get(s, "search", "devices", c.devices, 1, 256);
  r.get(s, "search", "device_class", c.device_class);
  r.get(s, "search", "retime_top", c.retime_top, 0, 20);
  r.get(s, "search", "retime_min_time", c.retime_min_time, 0.01, 60);
}

// [strategy]: the strategy and its parameters (checked by making it).
void read_strategy(const Reader& r, RunConfig& c) {
  auto st = r.table("strategy", {"name", "max_children", "exploration", "widening", "islands", "population",
                                 "selection", "tournament_size", "crossover_rate", "migration_interval"});
  r.get(st, "strategy", "name", c.strategy.name);
  r.get(st, "strategy", "max_children", c.strategy.max_children, 1, 1000);
  r.get(st, "strategy", "exploration", c.strategy.exploration, 0, 100);
  r.get(st, "strategy", "widening", c.strategy.widening, 0.01, 100);
  r.get(st, "strategy", "islands", c.strategy.islands, 1, 64);
  r.get(st, "strategy", "population", c.strategy.population, 1, 10000);
  r.get(st, "strategy", "selection", c.strategy.selection);
  r.get(st, "strategy", "tournament_size", c.strategy.tournament_size, 1, 100);
  r.get(st, "strategy", "crossover_rate", c.strategy.crossover_rate, 0, 1);
  r.get(st, "strategy", "migration_interval", c.strategy.migration_interval, 1, 1000);
  if (auto made = make_strategy(c.strategy); !made) r.fail("strategy", made.error());
}

// [budget], [store] and [eval].
void read_budget_store_eval(const Reader& r, RunConfig& c) {
  auto b = r.table("budget", {"evaluations", "seconds", "no_improvement", "target_speedup"});
  r.get(b, "budget", "evaluations", c.budget.max_evaluations, 1, 1e9);
  r.get(b, "budget", "seconds", c.budget.max_seconds, 0, 1e9);
  r.get(b, "budget", "no_improvement", c.budget.no_improvement, 0, 1e9);
  r.get(b, "budget", "target_speedup", c.budget.target_speedup, 0, 1e6);

  auto so = r.table("store", {"path", "checkpoint_seconds"});
  r.get(so, "store", "path", c.store);
  r.get(so, "store", "checkpoint_seconds", c.checkpoint_seconds, 0, 1e9);

  auto e = r.table("eval", {"threads", "trials", "min_time", "min_reps", "max_reps", "timeout", "memory_mb", "arch"});
  r.get(e, "eval", "threads", c.eval.threads, 0, 4096);
  r.get(e, "eval", "trials", c.eval.trials, 5, 1000);
  r.get(e, "eval", "min_time", c.eval.min_time_s, 0.001, 600);
  r.get(e, "eval", "min_reps", c.eval.min_reps, 1, 1e6);
  r.get(e, "eval", "max_reps", c.eval.max_reps, 1, 1e6);
  r.get(e, "eval", "timeout", c.eval.call_timeout_s, 0.1, 3600);
  r.get(e, "eval", "memory_mb", c.eval.memory_limit_mb, 16, 1e7);
  r.get(e, "eval", "arch", c.eval.arch);
  if (c.eval.arch.rfind("sm_", 0) != 0)
    r.fail("eval.arch", "'" + c.eval.arch + "' (expected a real architecture such as sm_90)");
  c.eval.seed = c.seed;
}

// [llm]: the provider, its limits and budgets, the ensemble (after [store]: the journal's default path).
void read_llm(const Reader& r, RunConfig& c) {
  auto l = r.table("llm", {"provider", "endpoint", "model", "api_key_env", "temperature", "max_tokens", "timeout",
                           "retries", "backoff", "concurrency", "cost_per_mtok_in", "cost_per_mtok_out",
                           "token_budget", "cost_budget", "models", "ca_file", "kernel_language", "token_parameter",
                           "send_temperature", "max_tokens_limit", "requests_per_minute", "max_backoff", "breaker",
                           "journal", "best_k"});
  if (c.op == "llm" && !l)
    r.fail("llm", "missing (operator = \"llm\" needs an [llm] table with provider, endpoint and model)");
  r.get(l, "llm", "provider", c.llm.provider);
  r.get(l, "llm", "endpoint", c.llm.endpoint);
  r.get(l, "llm", "model", c.llm.model);
  if (l && l->contains("models")) {
    auto arr = (*l)["models"].as_array();
    if (!arr) r.fail("llm.models", "expected an array of { name = \"MODEL\", weight = W } tables");
    for (auto&& e : *arr) {
      auto t = e.as_table();
      auto name = t ? (*t)["name"].value<std::string>() : std::nullopt;
      auto weight = t ? (*t)["weight"].value<double>() : std::nullopt;
      if (!name || !weight || *weight <= 0) r.fail("llm.models", "every entry needs name = \"MODEL\" and weight > 0");
      c.llm.ensemble.emplace_back(*name, *weight);
      if (!t) continue;
      llm::ModelOptions o;  // how this model is asked, when it differs from the [llm] table
      o.token_parameter = (*t)["token_parameter"].value_or(std::string());
      if (auto st = (*t)["send_temperature"].value<bool>()) o.send_temperature = *st ? 1 : 0;
      if (auto temp = (*t)["temperature"].value<double>()) o.temperature = *temp;
      if (!o.token_parameter.empty() || o.send_temperature >= 0 || o.temperature >= 0)
        c.llm.model_options[*name] = o;
    }
  }
  r.get(l, "llm", "api_key_env", c.llm.api_key_env);
  r.get(l, "llm", "ca_file", c.llm.ca_file);
  r.get(l, "llm", "kernel_language", c.llm_kernel_language);
  if (!c.llm_kernel_language.empty() && c.llm_kernel_language != "cuda" && c.llm_kernel_language != "triton" &&
      c.llm_kernel_language != "cpp")
    r.fail("llm.kernel_language", "'" + c.llm_kernel_language + "' (expected cuda, triton or cpp)");
  r.get(l, "llm", "temperature", c.llm.temperature, 0, 2);
  r.get(l, "llm", "max_tokens", c.llm.max_tokens, 1, 1e6);
  r.get(l, "llm", "timeout", c.llm.timeout_s, 1, 3600);
  r.get(l, "llm", "retries", c.llm.retries, 0, 20);
  r.get(l, "llm", "backoff", c.llm.backoff_s, 0, 60);
  r.get(l, "llm", "concurrency", c.llm_concurrency, 1, 256);
  r.get(l, "llm", "cost_per_mtok_in", c.llm.cost_per_mtok_in, 0, 1e6);
  r.get(l, "llm", "cost_per_mtok_out", c.llm.cost_per_mtok_out, 0, 1e6);
  r.get(l, "llm", "token_budget", c.llm.token_budget, 0, 1e12);
  r.get(l, "llm", "cost_budget", c.llm.cost_budget, 0, 1e9);
  r.get(l, "llm", "token_parameter", c.llm.token_parameter);
  if (c.llm.token_parameter != "max_tokens" && c.llm.token_parameter != "max_completion_tokens")
    r.fail("llm.token_parameter", "'" + c.llm.token_parameter + "' (expected max_tokens or max_completion_tokens)");
  r.get(l, "llm", "send_temperature", c.llm.send_temperature);
  r.get(l, "llm", "max_tokens_limit", c.llm.max_tokens_limit, 0, 1e7);
  r.get(l, "llm", "requests_per_minute", c.llm.requests_per_minute, 0, 1e6);
  r.get(l, "llm", "max_backoff", c.llm.max_backoff_s, 0, 3600);
  r.get(l, "llm", "breaker", c.llm.breaker, 0, 1e6);
  r.get(l, "llm", "best_k", c.llm.best_k, 1, 20);
  c.llm.concurrency = c.llm_concurrency;  // one limit for the operator's lanes and the provider's requests
  r.get(l, "llm", "journal", c.llm.journal);
  if (c.llm.journal.empty() && !c.store.empty()) c.llm.journal = c.store + ".llm-requests.jsonl";
}

// [null]: the null backend's delay and ledger.
void read_null(const Reader& r, RunConfig& c) {
  auto n = r.table("null", {"delay_ms", "ledger"});
  r.get(n, "null", "delay_ms", c.null_delay_ms, 0, 1e6);
  r.get(n, "null", "ledger", c.null_ledger);
}

// [cluster]: listening address, the two role keys, TLS, searches and submit folders (paths relative to the config's folder).
void read_cluster(const Reader& r, RunConfig& c, const std::string& path) {
  auto cl = r.table("cluster", {"listen", "evaluator_key_env", "console_key_env", "secret_env", "eval_timeout",
                                "heartbeat", "tls_cert", "tls_key", "tls_ca", "searches", "stay", "allow_plain_tcp",
                                "submit_dirs"});
  if (cl && cl->contains("secret_env"))
    r.fail("cluster.secret_env",
           "one secret for every role is gone: set evaluator_key_env and console_key_env (two different keys, so "
           "that an evaluator machine's key cannot run console commands)");
  r.get(cl, "cluster", "stay", c.cluster.stay);
  if (cl && cl->contains("searches")) {
    auto arr = (*cl)["searches"].as_array();
    if (!arr) r.fail("cluster.searches", "expected an array of config paths, e.g. [\"second.toml\"]");
    const std::string base = std::filesystem::path(path).parent_path().string();
    for (auto&& e : *arr) {
      auto v = e.value<std::string>();
      if (!v) r.fail("cluster.searches", "expected strings (config paths)");
      c.cluster.searches.push_back(std::filesystem::path(*v).is_absolute() || base.empty() ? *v : base + "/" + *v);
    }
  }
  r.get(cl, "cluster", "listen", c.cluster.listen);
  if (auto a = parse_host_port(c.cluster.listen, true); !a) r.fail("cluster.listen", a.error());
  r.get(cl, "cluster", "evaluator_key_env", c.cluster.evaluator_key_env);
  r.get(cl, "cluster", "console_key_env", c.cluster.console_key_env);
  if (c.cluster.evaluator_key_env.empty() || c.cluster.console_key_env.empty())
    r.fail("cluster.evaluator_key_env", "expected the names of two environment variables");
  {
    const std::string base = std::filesystem::path(path).parent_path().string();
    if (cl && cl->contains("submit_dirs")) {
      auto arr = (*cl)["submit_dirs"].as_array();
      if (!arr) r.fail("cluster.submit_dirs", "expected an array of folders, e.g. [\"/srv/searches\"]");
      for (auto&& e : *arr) {
        auto v = e.value<std::string>();
        if (!v) r.fail("cluster.submit_dirs", "expected strings (folders)");
        c.cluster.submit_dirs.push_back(std::filesystem::path(*v).is_absolute() || base.empty() ? *v : base + "/" + *v);
      }
    } else {
      c.cluster.submit_dirs.push_back(base.empty() ? "." : base);
    }
  }
  r.get(cl, "cluster", "eval_timeout", c.cluster.eval_timeout_s, 1, 1e6);
  r.get(cl, "cluster", "heartbeat", c.cluster.heartbeat_s, 0.05, 600);
  r.get(cl, "cluster", "tls_cert", c.cluster.tls_cert);
  r.get(cl, "cluster", "tls_key", c.cluster.tls_key);
  r.get(cl, "cluster", "tls_ca", c.cluster.tls_ca);
  const int tls = !c.cluster.tls_cert.empty() + !c.cluster.tls_key.empty() + !c.cluster.tls_ca.empty();
  if (tls != 0 && tls != 3)
    r.fail(c.cluster.tls_ca.empty()     ? "cluster.tls_ca"
           : c.cluster.tls_cert.empty() ? "cluster.tls_cert"
                                        : "cluster.tls_key",
           "missing: TLS needs tls_cert, tls_key and tls_ca together (without a CA file the peers are not "
           "authenticated, "
           "which this node refuses)");
  r.get(cl, "cluster", "allow_plain_tcp", c.cluster.allow_plain_tcp);
  if (cl && tls == 0 && !c.cluster.allow_plain_tcp) {
    const auto a = parse_host_port(c.cluster.listen, true);
    const std::string h = a ? a->first : "";
    if (!h.empty() && h != "localhost" && h.rfind("127.", 0) != 0 && h != "::1")
      r.fail("cluster.listen",
             "'" + c.cluster.listen + "' is reachable from other machines: set tls_cert, tls_key and tls_ca, or "
             "allow_plain_tcp = true to accept a network where the shared secret's proof is the only protection");
  }
}

// [dashboard]: address, token variable and plain-HTTP consent (after [cluster]: its TLS).
void read_dashboard(const Reader& r, RunConfig& c) {
  auto d = r.table("dashboard", {"listen", "token_env", "allow_plain_http"});
  r.get(d, "dashboard", "listen", c.dashboard.listen);
  r.get(d, "dashboard", "token_env", c.dashboard.token_env);
  r.get(d, "dashboard", "allow_plain_http", c.dashboard.allow_plain_http);
  if (c.dashboard.token_env.empty()) r.fail("dashboard.token_env", "expected the name of an environment variable");
  if (!c.dashboard.listen.empty())
    if (auto ok =
            check_dashboard_address(c.dashboard.listen, !c.cluster.tls_cert.empty(), c.dashboard.allow_plain_http);
        !ok)
      r.fail("dashboard.listen", ok.message);
}

}  // namespace

Status check_dashboard_address(const std::string& listen, bool tls, bool allow_plain_http) {
  auto a = parse_host_port(listen, true);
  if (!a) return Status::failure(Errc::invalid_argument, a.error());
  const std::string& h = a->first;
  const bool loopback = h == "localhost" || h.rfind("127.", 0) == 0 || h == "::1" || h == "[::1]";
  if (loopback || tls || allow_plain_http) return Status::success();
  return Status::failure(Errc::invalid_argument,
                         "'" + listen +
                             "' is reachable from other machines: set [cluster] tls_cert and tls_key (HTTPS), or "
                             "[dashboard] allow_plain_http = true to send the token in clear text");
}

Expected<RunConfig> load_run_config(const std::string& path) {
  using R = Expected<RunConfig>;
  std::ifstream in(path);
  if (!in) return R::failure(path + ": cannot read the config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_run_config(ss.str(), path);
}

Expected<RunConfig> parse_run_config(const std::string& text, const std::string& path) {
  using R = Expected<RunConfig>;
  RunConfig c;
  c.file = path;
  c.text = text;
  toml::table root;
  try {
    root = toml::parse(c.text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << path << ":" << e.source().begin.line << ": TOML syntax error: " << e.description();
    return R::failure(os.str());
  }
  try {
    Reader r(root, path);
    for (auto&& [k, v] : root) {
      (void)v;
      static const std::set<std::string> top{"search", "strategy", "budget",  "store",    "eval",
                                             "null",   "llm",      "cluster", "dashboard"};
      if (!top.count(std::string(k.str())))
        r.fail(std::string(k.str()),
               "unknown section (expected search, strategy, budget, store, eval, llm, cluster, dashboard or null)");
    }
    read_search(r, c);
    read_strategy(r, c);
    read_budget_store_eval(r, c);
    read_llm(r, c);
    read_null(r, c);
    read_cluster(r, c, path);
    read_dashboard(r, c);

    if (c.search_id.empty()) {
      std::string p = c.problem;
      if (auto slash = p.find_last_of('/'); slash != std::string::npos) p = p.substr(slash + 1);
      c.search_id = p + "-" + c.strategy.name + "-s" + std::to_string(c.seed);
    }
    c.llm.search = c.search_id;  // each journal line names its search (several may share a store)
  } catch (const ConfigError& e) { return R::failure(e.text); }
  return c;
}

}  // namespace kevolve
