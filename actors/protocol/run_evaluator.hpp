// The way into the actors for `kevolve evaluator` (implemented by actors/cluster/evaluator_node.cpp):
// spawns one device actor per device, connects to a coordinator as an evaluator
// (runtime/net/cluster_link.hpp: both sides prove the evaluator key), registers the devices, and serves evaluations until stopped. When the coordinator goes away (killed,
// restarted, the network cut) it reconnects by itself with back-off (1 s doubling to 30 s) and registers
// again; a refused proof (wrong secret) ends it.
#pragma once
#include <atomic>
#include <string>

namespace kevolve::cluster {

struct EvaluatorOptions {
  std::string host;
  uint16_t port = 0;
  std::string secret;     // the host key of `host_name` (runtime/net/peer_proof.hpp: evaluator_credential)
  std::string host_name;  // the host this evaluator's devices belong to
  std::string backend = "cpu";  // cpu | cuda | python | python-cuda | null
  int devices = 1;
  double null_delay_ms = 0;  // null backend: simulated evaluation time
  std::string null_ledger;   // null backend: append "search node" per evaluation (fault tests)
  double heartbeat_s = 1;
  std::string tls_cert, tls_key, tls_ca;    // TLS: all three, or none
  std::string tls_server_name;              // the name the node's certificate must carry (default: host)
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler
  // Leaving: when the node says it has finished (its registry stopped normally), and after this many
  // seconds without a node to join (0: never). `stay` keeps waiting for the next node in both cases.
  bool stay = false;
  double wait_for_node_s = 600;
};

// Serves until stopped, refused, told the node finished, or left without a node, then ends the process:
// exit code 0 when stopped or the node finished, 3 when refused (or a device was), 4 when no node came within wait_for_node_s.
[[noreturn]] void run_evaluator(const EvaluatorOptions& o);

}  // namespace kevolve::cluster
