// `kevolve evaluator`: spawns one device actor per device, joins a coordinator through its gatekeeper,
// registers the devices, and serves evaluations until stopped. When the coordinator goes away (killed,
// restarted, the network cut) it reconnects by itself with back-off (1 s doubling to 30 s) and registers
// again; a refused proof (wrong secret) ends it.
#pragma once
#include <atomic>
#include <string>

namespace kevolve::cluster {

struct EvaluatorOptions {
  std::string host;
  uint16_t port = 0;
  std::string secret;
  std::string backend = "cpu";  // cpu | cuda | python | python-cuda | null
  int devices = 1;
  double null_delay_ms = 0;  // null backend: simulated evaluation time
  std::string null_ledger;   // null backend: append "search node" per evaluation (fault tests)
  double heartbeat_s = 1;
  std::string tls_cert, tls_key, tls_ca;    // TLS: all three, or none
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler
};

// Serves until stopped or refused, then ends the process: exit code 0 when stopped, 3 when refused.
[[noreturn]] void run_evaluator(const EvaluatorOptions& o);

}  // namespace kevolve::cluster
