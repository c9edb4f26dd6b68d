#include "runtime/records/backend_kind.hpp"
#include "actors/cluster/evaluator_node.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "actors/cluster/join.hpp"
#include "actors/device/device_registry.hpp"
#include "actors/engine/engine.hpp"
#include "actors/protocol/cluster.hpp"
#include "backends/build_target.hpp"
#include "backends/device_info.hpp"

namespace kevolve::cluster {
namespace {

std::string host_name() {
  char b[256] = {0};
  gethostname(b, sizeof b - 1);
  return b;
}

DeviceInfo describe(const EvaluatorOptions& o, int index) {
  DeviceInfo d;
  d.host = host_name();
  d.pid = getpid();
  d.index = index;
  d.backend = o.backend;
  d.name = device_model(o.backend, index);
  d.arch = !backend_traits(o.backend).evaluates ? "null" : device_target(o.backend, index);
  d.device_class = device_class(d.arch, d.name);
  if (backend_traits(o.backend).evaluates) d.memory_bytes = device_memory_bytes(o.backend, index);
  d.fingerprint = "kevolve evaluator built with " __VERSION__;
  return d;
}

bool stopping(const EvaluatorOptions& o) { return o.stop && o.stop->load(); }

}  // namespace

void run_evaluator(const EvaluatorOptions& o) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  const TlsFiles tls{o.tls_cert, o.tls_key, o.tls_ca};
  configure_network(cfg, o.heartbeat_s);
  caf::actor_system sys{cfg};
  std::vector<device_actor> devices;
  std::vector<DeviceInfo> infos;
  // The host's copy bandwidth: the ceiling of CPU devices (a CUDA device's comes from its worker).
  const double host_gbps = std::string_view(backend_traits(o.backend).device) == "cpu" ? measure_host_copy_gbps() : 0;
  for (int i = 0; i < o.devices; ++i) {
    DeviceInfo& info = infos.emplace_back(describe(o, i));
    info.copy_gbps = host_gbps;
    devices.push_back(spawn_device(sys, {o.backend, 1, o.null_delay_ms, o.null_ledger,
                                         !backend_traits(o.backend).evaluates ? "" : info.arch, info.device_class, i}));
  }
  double backoff = 1;
  // Waits `backoff` seconds (a stop request cuts it short), then doubles it up to 30 s.
  auto back_off = [&] {
    for (int i = 0; i < static_cast<int>(backoff * 10) && !stopping(o); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    backoff = std::min(30.0, backoff * 2);
  };
  int code = 0;
  // Since when no node has been joined (reset on every successful registration).
  auto alone_since = std::chrono::steady_clock::now();
  auto waited_too_long = [&] {
    if (o.stay || o.wait_for_node_s <= 0) return false;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - alone_since).count();
    return s >= o.wait_for_node_s;
  };
  while (!stopping(o)) {
    if (waited_too_long()) {
      std::cerr << "kevolve evaluator: no coordinator at " << o.host << ":" << o.port << " for " << o.wait_for_node_s
                << " s; leaving (--wait-for-node sets how long, --stay waits for ever)\n";
      code = 4;
      break;
    }
    JoinError why;
    auto registry = join(sys, o.host, o.port, o.secret, "evaluator", &why, tls);
    if (!registry) {
      if (why.refused) {
        std::cerr << "kevolve evaluator: " << registry.error() << "\n";
        code = 3;
        break;
      }
      std::cerr << "kevolve evaluator: " << registry.error() << "; retrying in " << backoff << " s\n";
      back_off();
      continue;
    }
    caf::scoped_actor self{sys};
    // A refusal ends the evaluator; no answer (timeout, connection lost) is a connection problem: retry.
    bool refused = false, answered = true;
    for (int i = 0; i < o.devices && !refused && answered; ++i)
      self->request(*registry, std::chrono::seconds(10), atoms::register_atom::value, infos[i],
                    caf::actor_cast<caf::actor>(devices[i]))
          .receive(
              [&](std::string& why) {
                if (!why.empty()) {
                  std::cerr << "kevolve evaluator: device " << i << " refused: " << why << "\n";
                  refused = true;
                }
              },
              [&](caf::error& e) {
                std::cerr << "kevolve evaluator: registering device " << i << ": " << sys.render(e)
                          << "; reconnecting in " << backoff << " s\n";
                answered = false;
              });
    if (refused) {
      code = 3;
      break;
    }
    if (!answered) {
      back_off();
      continue;
    }
    std::cerr << "kevolve evaluator: " << o.devices << " " << o.backend << " device(s) joined " << o.host << ":"
              << o.port << "\n";
    backoff = 1;
    self->monitor(*registry);
    bool lost = false, finished = false;
    while (!lost && !stopping(o))
      self->receive(
          [&](caf::down_msg& m) {
            lost = true;
            // The node says when it ends on purpose (above); a cut connection or a killed node reads as
            // unreachable, and the evaluator reconnects.
            if (finished) return;  // told already
            std::cerr << "kevolve evaluator: lost the coordinator (" << sys.render(m.reason) << "); reconnecting\n";
          },
          [&](atoms::control_atom, const std::string& what) -> std::string {
            if (what != "finished") return "unknown";
            finished = lost = true;
            std::cerr << "kevolve evaluator: the node has finished"
                      << (o.stay ? "; waiting for the next one (--stay)\n"
                                 : "; leaving (--stay waits for the next one)\n");
            return "leaving";  // the node waits for this answer before it stops
          },
          caf::after(std::chrono::milliseconds(200)) >> [] {});
    alone_since = std::chrono::steady_clock::now();
    if (finished && !o.stay) break;
  }
  for (auto& d : devices) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  // CAF keeps devices that were ever sent to a remote node in its actor registry, so the actor system's
  // destructor would wait for their threads forever. An evaluator holds nothing durable (its worker
  // processes die with it), so it leaves here without tearing the system down.
  std::cerr << std::flush;
  std::_Exit(code);
}

}  // namespace kevolve::cluster
