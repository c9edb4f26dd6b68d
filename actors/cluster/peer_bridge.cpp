#include "actors/cluster/peer_bridge.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <iostream>
#include <map>

#include "runtime/net/cluster_frames.hpp"
#include "actors/protocol/cluster.hpp"
#include "runtime/core/log.hpp"

namespace kevolve::cluster {
namespace {

constexpr uint32_t kMaxDevicesPerLink = 1024;
constexpr size_t kMaxFramesQueued = 4096;  // frames handed to the bridge and not yet handled
constexpr int kMaxConsoleAsks = 16;        // console commands of one link in flight

using LinkPtr = std::shared_ptr<net::Link>;

// A device of an evaluator, as the node's own actor: what the registry sends it goes out as a frame, and a
// result comes back only for a job it sent.
struct RemoteDeviceState {
  LinkPtr link;
  uint32_t index = 0;
  uint64_t next_job = 1;
  std::map<uint64_t, caf::response_promise> pending;
  static inline const char* name = "remote-device";
};

caf::behavior remote_device(caf::stateful_actor<RemoteDeviceState>* self, LinkPtr link, uint32_t index) {
  self->state.link = std::move(link);
  self->state.index = index;
  return {
      [self](atoms::spec_atom, const std::string& problem, const std::string& blob) {
        self->state.link->send(kSpec, encode(SpecFrame{self->state.index, problem, blob}));
      },
      [self](atoms::eval_atom, EvalJob& job) -> caf::result<EvalResult> {
        auto& st = self->state;
        const uint64_t id = st.next_job++;
        auto rp = self->make_response_promise();
        if (!st.link->send(kEval, encode(EvalFrame{st.index, id, std::move(job)})))
          return caf::make_error(caf::sec::request_receiver_down);
        st.pending.emplace(id, rp);
        return caf::delegated<EvalResult>{};
      },
      [self](atoms::result_atom, uint64_t job, EvalResult& r) {
        auto& st = self->state;
        auto it = st.pending.find(job);
        if (it == st.pending.end()) {
          log::info("node") <<  st.link->peer() << " sent a result for job " << job
                    << ", which its device " << st.index << " was not given; closing the connection\n";
          st.link->close("a result for a job it was not given");
          return;
        }
        it->second.deliver(std::move(r));
        st.pending.erase(it);
      },
  };
}

struct BridgeState {
  LinkPtr link;
  caf::actor registry;
  std::shared_ptr<std::atomic<size_t>> queued;
  std::map<uint32_t, caf::actor> devices;
  int asks = 0;
  static inline const char* name = "peer-bridge";
};

using Bridge = caf::stateful_actor<BridgeState>*;

void refuse_link(Bridge self, const std::string& why) {
  log::warn("node") << "closed the " << net::role_name(self->state.link->role()) << " connection from "
            << self->state.link->peer() << ": " << why ;
  self->state.link->close(why);
}

void on_register(Bridge self, const std::string& payload) {
  auto& st = self->state;
  auto f = decode_register(payload);
  if (!f) return refuse_link(self, f.error());
  if (f->index >= kMaxDevicesPerLink || st.devices.count(f->index))
    return refuse_link(self, "device index " + std::to_string(f->index) + " registered twice or out of range");
  // The link proved the key of one host: its devices are that host's, and no other's.
  if (f->info.host != st.link->host())
    return refuse_link(self, "a device of host '" + net::escaped(f->info.host) + "' on a connection that proved host '" +
                                 st.link->host() + "'");
  // What the evaluator says about its device reaches the node's log, the console, the dashboard and every
  // verdict's profile line: printable and bounded.
  for (std::string* text : {&f->info.backend, &f->info.name, &f->info.arch, &f->info.fingerprint,
                            &f->info.device_class})
    *text = net::escaped(*text, 200);
  const uint32_t index = f->index;
  auto dev = self->spawn<caf::linked>(remote_device, st.link, index);
  st.devices[index] = dev;
  self->request(st.registry, caf::infinite, atoms::register_atom::value, f->info, dev)
      .then(
          [self, index, dev](std::string& reason) {
            if (!reason.empty()) {
              self->state.devices.erase(index);
              self->send_exit(dev, caf::exit_reason::user_shutdown);
            }
            self->state.link->send(kRegistered, encode(RegisteredFrame{index, reason}));
          },
          [self](caf::error& e) { refuse_link(self, "the registry did not answer: " + self->system().render(e)); });
}

void on_result(Bridge self, const std::string& payload) {
  auto f = decode_result(payload);
  if (!f) return refuse_link(self, f.error());
  auto it = self->state.devices.find(f->index);
  if (it == self->state.devices.end())
    return refuse_link(self, "a result for device " + std::to_string(f->index) + ", which it never registered");
  self->send(it->second, atoms::result_atom::value, f->job, std::move(f->result));
}

void on_ask(Bridge self, const std::string& payload) {
  auto& st = self->state;
  auto f = decode_ask(payload);
  if (!f) return refuse_link(self, f.error());
  if (st.asks >= kMaxConsoleAsks) return refuse_link(self, "more than 16 commands in flight");
  ++st.asks;
  const uint64_t id = f->id;
  self->request(st.registry, caf::infinite, atoms::console_atom::value, std::move(f->words))
      .then(
          [self, id](std::string& text) {
            --self->state.asks;
            self->state.link->send(kAnswer, encode(AnswerFrame{id, text}));
          },
          [self, id](caf::error& e) {
            --self->state.asks;
            self->state.link->send(kAnswer,
                                   encode(AnswerFrame{id, "error: the node did not answer: " +
                                                              self->system().render(e) + "\n"}));
          });
}

caf::behavior bridge(Bridge self, LinkPtr link, caf::actor registry, std::shared_ptr<std::atomic<size_t>> queued) {
  auto& st = self->state;
  st.link = std::move(link);
  st.registry = std::move(registry);
  st.queued = std::move(queued);
  self->monitor(st.registry);
  self->set_down_handler([self](caf::down_msg& m) {
    if (m.source != self->state.registry.address()) return;
    self->state.link->close("the node is shutting down");
    self->quit(caf::exit_reason::user_shutdown);
  });
  const bool evaluator = st.link->role() == net::Role::evaluator;
  return {
      [self, evaluator](atoms::frame_atom, uint8_t kind, const std::string& payload) {
        --*self->state.queued;
        if (evaluator && kind == kRegister) return on_register(self, payload);
        if (evaluator && kind == kResult) return on_result(self, payload);
        if (!evaluator && kind == kAsk) return on_ask(self, payload);
        refuse_link(self, std::string(evaluator ? "an " : "a ") + net::role_name(self->state.link->role()) +
                              " connection may not send frame kind " + std::to_string(kind));
      },
      [self](atoms::closed_atom, const std::string& why) {
        // An evaluator's end is worth a line; a console's only when it broke the protocol or went silent.
        const bool plain_end = why == "the other side closed the connection";
        if (!self->state.devices.empty() || !plain_end)
          log::info("node") << "the " << net::role_name(self->state.link->role()) << " connection from "
                    << self->state.link->peer() << " ended (" << why << ")";
        self->quit(caf::exit_reason::user_shutdown);  // its remote devices end with it
      },
      // The registry, when the node ends on purpose: the evaluator is told, and leaves.
      [self](atoms::control_atom, const std::string& what) -> ActionReply {
        if (what != "finished") return ActionReply::refused(Errc::invalid_argument, "unknown control '" + what + "'");
        self->state.link->send(kFinished, {});
        self->state.link->close("the node has finished");  // after the frame above is written (1 s at most)
        return ActionReply::done("leaving");
      },
  };
}

}  // namespace

net::LinkHandlers bridge_link(caf::actor_system& sys, std::shared_ptr<net::Link> link, const caf::actor& registry) {
  auto queued = std::make_shared<std::atomic<size_t>>(0);
  caf::actor b = sys.spawn(bridge, link, registry, queued);
  net::LinkHandlers h;
  std::weak_ptr<net::Link> weak = link;
  h.on_frame = [b, queued, weak](uint8_t kind, std::string payload) {
    if (++*queued > kMaxFramesQueued) {
      if (auto l = weak.lock()) l->close("more than 4096 frames waiting to be handled");
      return;
    }
    caf::anon_send(b, atoms::frame_atom::value, kind, std::move(payload));
  };
  h.on_close = [b](const std::string& why) { caf::anon_send(b, atoms::closed_atom::value, why); };
  return h;
}

}  // namespace kevolve::cluster
