// The way into the actors for `kevolve run` and `kevolve node` (what a command includes; the actors
// themselves are below it): run_search opens the store, resumes or starts the search, spawns the store,
// operator, compile farm, device registry and search actors, reports progress until the search finishes,
// and shuts everything down. Implemented by actors/engine/engine.cpp, the only place that creates a
// caf::actor_system.
#pragma once
#include <atomic>
#include <caf/fwd.hpp>
#include <vector>
#include <functional>
#include <memory>

#include "runtime/net/cluster_link.hpp"
#include "runtime/dashboard/dashboard_server.hpp"
#include "actors/protocol/messages.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/problem.hpp"
#include "runtime/config/run_config.hpp"

namespace kevolve {

// TLS between cluster processes (runtime/net/cluster_link.hpp).
using TlsFiles = net::LinkTls;

// A search ready to run: its config, problem and operator (made by the command line from a config file).
struct PreparedSearch {
  RunConfig config;
  ProblemSpec spec;
  std::shared_ptr<Operator> op;
  bool submitted = false;  // a console submission being resumed after the node restarted
};

// `kevolve node`: the search's devices are evaluators in other processes that join over the network.
// The node may run further searches beside the first (same store, farm and devices): `more` at start,
// and those the console submits (`prepare` turns a config path into a search).
struct ClusterOptions {
  std::string host = "127.0.0.1";  // where the node listens (runtime/net/cluster_link.hpp)
  uint16_t port = 0;               // 0: any free port (see on_listening)
  net::RoleKeys keys;              // the evaluator key and the console key, each proven by its role
  double eval_timeout_s = 900;     // a remote evaluation without an answer by then is re-queued
  double heartbeat_s = 1;          // connection heartbeats, so a silent cut is noticed
  TlsFiles tls;                    // set: TLS on every link, peers authenticated by certificate
  std::function<void(uint16_t port)> on_listening;
  std::vector<PreparedSearch> more;
  std::function<Expected<PreparedSearch>(const std::string& config_path)> prepare;
  std::function<void(const RunConfig&, const ProblemSpec&)> on_finished;  // each further search, when it ends
  bool stay = false;  // keep serving (and accepting submissions) when every search has ended
};

struct EngineOptions {
  std::function<void(const SearchStatus&)> progress;  // called about twice a second
  const std::atomic<bool>* interrupted = nullptr;     // set by a signal handler: shut down now (resumable)
  std::atomic<bool>* checkpoint_now = nullptr;        // set by a signal handler: take a checkpoint now
  const ClusterOptions* cluster = nullptr;            // set: listen for evaluators and consoles
  // Set: serve the web dashboard (actors/dashboard/), which asks the console's questions of the cluster
  // registry (on a node, the node's own; in a local run, one that only answers the console).
  const dashboard::ServerOptions* dashboard = nullptr;
};

// Runs (or resumes) the search of `config` to its end. Returns the final status, or an error (store
// busy, spec mismatch with the stored search, ...). `op` makes the children.
Expected<SearchStatus> run_search(const RunConfig& config, const ProblemSpec& spec, std::shared_ptr<Operator> op,
                                  const EngineOptions& options);

}  // namespace kevolve
