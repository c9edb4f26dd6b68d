// RunConfig: what `kevolve run CONFIG` searches, and how. Loaded from TOML; every error names the file,
// the key and what was expected. See configs/quickstart.toml for a commented example.
#pragma once
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/llm/llm_client.hpp"
#include "runtime/records/eval_request.hpp"
#include "runtime/search/strategy.hpp"
#include "runtime/search/termination.hpp"

namespace kevolve {

struct RunConfig {
  std::string file;               // the config file
  std::string text;               // its contents (stored with the search)
  std::string problem;            // problem name or path to problem.toml
  std::string search_id;          // default: <problem>-<strategy>-s<seed>
  std::string backend = "cpu";    // cpu | null (synthetic, for engine benchmarks and tests)
  std::string op = "template";    // operator
  std::string template_name;      // knowledge/templates/<backend>/<this>; default: the problem's name
  bool directed = false;          // the template operator follows each parent's diagnosis
  bool warm_start = true;         // a new search starts from the best kernel earlier searches stored (context memory)
  std::string hardware = "auto";  // knowledge/hardware/<this>: constraints for templates and prompts; auto = this CPU
  llm::LlmConfig llm;             // operator = "llm"
  int llm_concurrency = 2;        // LLM requests in flight at once
  std::string
      llm_kernel_language;  // KernelBench-format problems: ModelNew's kernels in cuda | triton | cpp ("" = cuda on the GPU, cpp on the CPU)
  std::string replay_store, replay_search;  // operator = "replay": the recorded search to replay
  uint64_t seed = 1;
  int max_in_flight = 4;  // candidates proposed but not yet scored
  int build_workers = 0;  // compile farm size; 0 = number of cores
  int devices = 1;        // evaluation devices (CPU: 1, so timings do not contend)
  // Only devices whose class ("cuda:sm_90 NVIDIA H200", backends/build_target.hpp) contains this text
  // evaluate the search's candidates; "" = any. A local run refuses a value its own devices do not match.
  std::string device_class;
  StrategyConfig strategy;
  TerminationConfig budget;
  std::string store = "kevolve-store";
  double checkpoint_seconds = 600;  // periodic RocksDB checkpoint; 0 = off
  int retime_top = 3;               // re-time this many best candidates for the report
  double retime_min_time = 1.0;     // seconds of timing per side when re-timing
  EvalOptions eval;
  // `kevolve node` only: where evaluators and consoles connect, and the keys each role proves.
  struct Cluster {
    std::string listen = "127.0.0.1:7411";              // HOST:PORT (loopback unless configured)
    std::string evaluator_key_env = "KEVOLVE_EVALUATOR_KEY";  // the variable that holds the evaluators' key
    std::string console_key_env = "KEVOLVE_CONSOLE_KEY";      // the variable that holds the consoles' key
    double eval_timeout_s = 900;                        // a remote evaluation without an answer by then is re-queued
    double heartbeat_s = 1;                             // connection heartbeats (a cut is noticed after 5 missed)
    std::string tls_cert, tls_key, tls_ca;              // TLS on every cluster link: all three, or none
    bool allow_plain_tcp = false;                       // plain TCP on a non-loopback address (else TLS is required)
    std::vector<std::string> searches;  // further search configs the node starts (relative to this file)
    bool stay = false;                  // keep serving when every search has ended (console submit)
    // Folders whose configs a console's `submit` may start (default: this config's own folder); any other
    // path is refused before the node opens it.
    std::vector<std::string> submit_dirs;
  } cluster;
  // The web dashboard (actors/dashboard/): served by `kevolve node` and `kevolve run` when `listen` is set
  // (or `kevolve run --serve`); TLS with [cluster] tls_cert and tls_key when those are set.
  struct Dashboard {
    std::string listen;                                 // HOST:PORT; "" = no dashboard (port 0: any free port)
    std::string token_env = "KEVOLVE_DASHBOARD_TOKEN";  // the variable that holds the access token
    bool allow_plain_http = false;                      // plain HTTP on a non-loopback address (else TLS)
  } dashboard;
  // null backend only
  double null_delay_ms = 0;  // simulated evaluation time
  std::string null_ledger;   // append "search node" per finished evaluation (crash tests)
};

// Loads `path`; relative paths inside (store, ledger) are resolved against the current directory.
Expected<RunConfig> load_run_config(const std::string& path);

// The same from a config's text (a stored search's config_text); `file` names it in errors.
Expected<RunConfig> parse_run_config(const std::string& text, const std::string& file);

// Whether a dashboard may listen on `listen` (HOST:PORT): a loopback address, TLS, or plain HTTP allowed
// explicitly. The error quotes the address and says what to set.
Status check_dashboard_address(const std::string& listen, bool tls, bool allow_plain_http);

}  // namespace kevolve
