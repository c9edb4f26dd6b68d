#include "runtime/records/backend_kind.hpp"
#include "actors/protocol/run_evaluator.hpp"

#include <caf/all.hpp>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "runtime/net/cluster_frames.hpp"
#include "actors/device/device_registry.hpp"
#include "actors/protocol/cluster.hpp"
#include "backends/build_target.hpp"
#include "backends/device_info.hpp"
#include "runtime/net/cluster_link.hpp"
#include "runtime/core/log.hpp"

namespace kevolve::cluster {
namespace {

DeviceInfo describe(const EvaluatorOptions& o, int index) {
  DeviceInfo d;
  d.host = o.host_name;
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

// How one connection ended, for the reconnect loop.
struct SessionEnd {
  std::mutex m;
  bool refused = false, finished = false;
  std::shared_ptr<net::Link> link;  // set once connected
};

// The evaluator's side of one link: registers every device, hands the node's jobs to them and their
// verdicts back. Quits when the link ends, a device is refused, or the node says it has finished.
struct ClientState {
  std::shared_ptr<SessionEnd> end;
  std::vector<device_actor> devices;
  std::vector<DeviceInfo> infos;
  size_t joined = 0;
  std::string where;
  static inline const char* name = "evaluator-link";
};

caf::behavior client_bridge(caf::stateful_actor<ClientState>* self, std::shared_ptr<SessionEnd> end,
                            std::vector<device_actor> devices, std::vector<DeviceInfo> infos, std::string where) {
  auto& st = self->state;
  st.end = std::move(end);
  st.devices = std::move(devices);
  st.infos = std::move(infos);
  st.where = std::move(where);
  auto link = [self] {
    std::lock_guard<std::mutex> lock(self->state.end->m);
    return self->state.end->link;
  };
  auto drop = [self, link](const std::string& why) {
    log::info("evaluator") <<  why ;
    if (auto l = link()) l->close(why);
    self->quit(caf::exit_reason::user_shutdown);
  };
  return {
      [self, link](atoms::start_atom) {
        auto l = link();
        for (size_t i = 0; i < self->state.infos.size(); ++i)
          l->send(kRegister, encode(RegisterFrame{static_cast<uint32_t>(i), self->state.infos[i]}));
      },
      [self, link, drop](atoms::frame_atom, uint8_t kind, const std::string& payload) {
        auto& st = self->state;
        if (kind == kRegistered) {
          auto f = decode_registered(payload);
          if (!f) return drop("a malformed frame from the node: " + f.error());
          if (!f->reason.empty()) {
            log::warn("evaluator") << "device " << f->index << " refused: " << f->reason ;
            std::lock_guard<std::mutex> lock(st.end->m);
            st.end->refused = true;
            if (st.end->link) st.end->link->close("refused");
            self->quit(caf::exit_reason::user_shutdown);
            return;
          }
          if (++st.joined == st.devices.size())
            log::info("evaluator") <<  st.devices.size() << " " << st.infos[0].backend
                      << " device(s) joined " << st.where ;
          return;
        }
        if (kind == kSpec) {
          auto f = decode_spec(payload);
          if (!f || f->index >= st.devices.size()) return drop("a malformed spec frame from the node");
          self->send(st.devices[f->index], atoms::spec_atom::value, f->problem, f->spec);
          return;
        }
        if (kind == kEval) {
          auto f = decode_eval(payload);
          if (!f || f->index >= st.devices.size()) return drop("a malformed job frame from the node");
          const uint32_t index = f->index;
          const uint64_t job = f->job;
          self->request(st.devices[index], caf::infinite, atoms::eval_atom::value, std::move(f->eval))
              .then([link, index, job](EvalResult& r) {
                if (auto l = link()) l->send(kResult, encode(ResultFrame{index, job, std::move(r)}));
              });
          return;
        }
        if (kind == kFinished) {
          std::lock_guard<std::mutex> lock(st.end->m);
          st.end->finished = true;
          if (st.end->link) st.end->link->close("the node has finished");
          self->quit(caf::exit_reason::user_shutdown);
          return;
        }
        drop("the node sent frame kind " + std::to_string(kind) + ", which an evaluator does not take");
      },
      [self](atoms::closed_atom, const std::string& why) {
        bool told;
        {
          std::lock_guard<std::mutex> lock(self->state.end->m);
          told = self->state.end->finished || self->state.end->refused;
        }
        if (!told) log::warn("evaluator") << "lost the coordinator (" << why << "); reconnecting\n";
        self->quit(caf::exit_reason::user_shutdown);
      },
  };
}

// How the evaluator connects to its coordinator.
net::ConnectOptions connect_options(const EvaluatorOptions& o) {
  net::ConnectOptions co;
  co.host = o.host;
  co.port = o.port;
  co.role = net::Role::evaluator;
  co.key = o.secret;
  co.host_name = o.host_name;
  co.tls = {o.tls_cert, o.tls_key, o.tls_ca, o.tls_server_name};
  co.limits.heartbeat_s = o.heartbeat_s;
  return co;
}

// Returns once the session's bridge has ended; a stop request closes the link and ends the bridge.
void await_session(caf::actor_system& sys, const caf::actor& bridge, net::Link& link, const EvaluatorOptions& o) {
  caf::scoped_actor self{sys};
  self->monitor(bridge);
  bool over = false;
  while (!over) {
    self->receive([&](caf::down_msg&) { over = true; }, caf::after(std::chrono::milliseconds(200)) >>
                                                            [&] {
                                                              if (stopping(o)) {
                                                                link.close("stopped");
                                                                caf::anon_send_exit(bridge,
                                                                                    caf::exit_reason::user_shutdown);
                                                              }
                                                            });
  }
}

}  // namespace

void run_evaluator(const EvaluatorOptions& o) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
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
  // Since when no node has been joined (reset on every successful connection).
  auto alone_since = std::chrono::steady_clock::now();
  auto waited_too_long = [&] {
    if (o.stay || o.wait_for_node_s <= 0) return false;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - alone_since).count();
    return s >= o.wait_for_node_s;
  };
  const std::string where = o.host + ":" + std::to_string(o.port);
  while (!stopping(o)) {
    if (waited_too_long()) {
      log::warn("evaluator") << "no coordinator at " << where << " for " << o.wait_for_node_s
                << " s; leaving (--wait-for-node sets how long, --stay waits for ever)\n";
      code = 4;
      break;
    }
    auto end = std::make_shared<SessionEnd>();
    caf::actor bridge = sys.spawn(client_bridge, end, devices, infos, where);
    net::LinkHandlers h;
    h.on_frame = [bridge](uint8_t kind, std::string payload) {
      caf::anon_send(bridge, atoms::frame_atom::value, kind, std::move(payload));
    };
    h.on_close = [bridge](const std::string& why) { caf::anon_send(bridge, atoms::closed_atom::value, why); };
    net::ConnectError why;
    auto link = net::connect(connect_options(o), std::move(h), &why);
    if (!link) {
      caf::anon_send_exit(bridge, caf::exit_reason::user_shutdown);
      if (why.refused) {
        log::info("evaluator") <<  link.error() ;
        code = 3;
        break;
      }
      log::info("evaluator") <<  link.error() << "; retrying in " << backoff << " s\n";
      back_off();
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(end->m);
      end->link = *link;
    }
    caf::anon_send(bridge, atoms::start_atom::value);
    backoff = 1;
    await_session(sys, bridge, **link, o);
    alone_since = std::chrono::steady_clock::now();
    bool refused, finished;
    {
      std::lock_guard<std::mutex> lock(end->m);
      refused = end->refused;
      finished = end->finished;
      end->link.reset();
    }
    link->reset();
    if (refused) {
      code = 3;
      break;
    }
    if (finished) {
      log::info("evaluator") << "the node has finished"
                << (o.stay ? "; waiting for the next one (--stay)\n" : "; leaving (--stay waits for the next one)\n");
      if (!o.stay) break;
    }
  }
  for (auto& d : devices) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  // An evaluator holds nothing durable (its worker processes die with it): it leaves without waiting for the
  // actor system's teardown.
  std::cerr << std::flush;
  std::_Exit(code);
}

}  // namespace kevolve::cluster
