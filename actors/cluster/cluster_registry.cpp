#include "runtime/records/backend_kind.hpp"
#include "actors/cluster/cluster_registry.hpp"

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "runtime/views/console_service.hpp"
#include "runtime/core/log.hpp"

namespace kevolve {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Pending {
  EvalJob job;
  caf::typed_response_promise<EvalResult> promise;
  int attempts = 0;
};

struct Device {
  caf::actor hdl;
  DeviceInfo info;
  bool alive = true;
  uint64_t token = 0;  // the dispatch in flight on this device (0: idle)
  Pending inflight;
  Clock::time_point joined = Clock::now(), started;
  int64_t evaluated = 0;
  double busy_s = 0, busy_while_queued_s = 0, queued_s = 0;
  Clock::time_point last_account = Clock::now();
};

struct RegistryState {
  std::shared_ptr<cluster::TreeCache> trees = std::make_shared<cluster::TreeCache>();  // console `tree --json`
  ClusterRegistrySetup setup;
  std::vector<Device> devices;
  std::deque<Pending> queue;
  std::map<std::string, std::string> specs;  // problem -> encoded spec, sent to every device that joins
  std::vector<caf::actor> searches;          // the node's live searches
  std::map<std::string, caf::actor> by_id;
  std::map<std::string, SearchStatus> statuses;  // as last asked (every second)
  caf::actor engine;                             // takes the console's submissions
  std::vector<caf::actor> owners;                // the evaluators that registered devices (told when the node ends)
  bool closing = false;                          // the evaluators were told the node has finished
  std::set<std::string> pins_warned;             // "search|class" whose jobs found no device of that class
  uint64_t status_failures = 0;                  // status requests not answered (a search ending)
  uint64_t next_token = 1;
  int64_t dispatched = 0, requeued = 0;
  Clock::time_point started = Clock::now();
  static inline const char* name = "cluster-registry";
};

using Self = cluster_registry_actor::stateful_pointer<RegistryState>;

// Utilisation bookkeeping: time each device spent busy, and busy while work was waiting in the queue.
void account(RegistryState& st) {
  const auto now = Clock::now();
  for (auto& d : st.devices) {
    const double dt = std::chrono::duration<double>(now - d.last_account).count();
    d.last_account = now;
    if (!d.alive) continue;
    const bool busy = d.token != 0;
    if (busy) d.busy_s += dt;
    if (!st.queue.empty() || busy) {  // work was there for this device to do
      d.queued_s += dt;
      if (busy) d.busy_while_queued_s += dt;
    }
  }
}

// The build folder's files, for an evaluator that may not share this file system.
void pack_files(EvalJob& job) {
  std::error_code ec;
  if (job.build.dir.empty() || !fs::is_directory(job.build.dir, ec)) return;
  for (auto& e : fs::directory_iterator(job.build.dir, ec)) {
    if (!e.is_regular_file() || e.file_size() > (64u << 20)) continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    job.files[e.path().filename().string()] = s.str();
  }
}

void dispatch(Self self);

void requeue(Self self, Device& d, const std::string& why) {
  auto& st = self->state;
  if (d.token == 0) return;
  d.token = 0;
  Pending p = std::move(d.inflight);
  ++p.attempts;
  ++st.requeued;
  log::info("node") << "re-queued " << p.job.search << " node " << p.job.node << " from " << d.info.host << ":"
            << d.info.pid << "/" << d.info.index << " (" << why << ")";
  if (p.attempts >= self->state.setup.max_attempts) {
    EvalResult r;
    r.status = EvalStatus::harness_error;
    r.reason = "device";
    r.message =
        "no evaluator finished this candidate in " + std::to_string(p.attempts) + " attempts (last: " + why + ")";
    p.promise.deliver(std::move(r));
    return;
  }
  st.queue.push_front(std::move(p));
}

void finish(Self self, size_t i, uint64_t token, EvalResult r) {
  auto& st = self->state;
  account(st);
  Device& d = st.devices[i];
  if (d.token != token) return;  // already re-queued (the device died or timed out meanwhile)
  d.token = 0;
  ++d.evaluated;
  if (r.device_class.empty()) r.device_class = d.info.device_class;
  if (d.info.copy_gbps <= 0 && r.peak_gbps > 0) d.info.copy_gbps = r.peak_gbps;  // the worker's own measurement
  r.profile = "evaluated on " + d.info.host + " (evaluator pid " + std::to_string(d.info.pid) + ", device " +
              std::to_string(d.info.index) + ": " + d.info.name + "; " + d.info.fingerprint + ")\n" + r.profile;
  d.inflight.promise.deliver(std::move(r));
  dispatch(self);
}

void dispatch(Self self) {
  auto& st = self->state;
  account(st);
  for (auto it = st.queue.begin(); it != st.queue.end();) {
    // A free device of the job's backend (and of the search's device class, when it names one), preferably
    // one of the target the job was built for (another one rebuilds the candidate from source).
    size_t pick = st.devices.size();
    for (size_t i = 0; i < st.devices.size(); ++i) {
      const Device& d = st.devices[i];
      if (!d.alive || d.token != 0 || d.info.backend != it->job.backend) continue;
      if (!it->job.device_class.empty() && d.info.device_class.find(it->job.device_class) == std::string::npos)
        continue;
      if (pick == st.devices.size()) pick = i;
      if (d.info.arch == it->job.target) {
        pick = i;
        break;
      }
    }
    if (pick == st.devices.size()) {
      ++it;
      continue;
    }
    Device& d = st.devices[pick];
    d.inflight = std::move(*it);
    it = st.queue.erase(it);
    if (d.inflight.job.files.empty()) pack_files(d.inflight.job);
    const uint64_t token = st.next_token++;
    d.token = token;
    d.started = Clock::now();
    ++st.dispatched;
    self->request(d.hdl,
                  std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(st.setup.eval_timeout_s)),
                  atoms::eval_atom::value, d.inflight.job)
        .then([self, pick, token](EvalResult& r) { finish(self, pick, token, std::move(r)); },
              [self, pick, token](caf::error& e) {
                auto& s = self->state;
                account(s);
                Device& dev = s.devices[pick];
                if (dev.token != token) return;
                dev.alive = false;  // timed out or unreachable: no more work for it
                requeue(self, dev, "no answer: " + self->system().render(e));
                dispatch(self);
              });
  }
}

// Records a live search's status (and its id); a search that has ended keeps its last status.
void ask_status(Self self, const caf::actor& search) {
  self->request(search, std::chrono::seconds(5), atoms::status_atom::value)
      .then(
          [self, search](SearchStatus& s) {
            self->state.by_id[s.search] = search;
            self->state.statuses[s.search] = std::move(s);
          },
          [self](caf::error& e) {  // a search that has just ended answers no more: it keeps its last status
            ++self->state.status_failures;
            log::debug("node") << "a search's status was not read: " << self->system().render(e);
          });
}

cluster::ClusterView view(Self self) {
  auto& st = self->state;
  account(st);
  cluster::ClusterView v;
  v.store = st.setup.store;
  v.trees = st.trees;
  for (auto& [id, s] : st.statuses) v.live.push_back(s);
  for (auto& d : st.devices) {
    cluster::DeviceRow r;
    r.info = d.info;
    r.alive = d.alive;
    r.busy = d.token != 0;
    if (r.busy) r.current = d.inflight.job.search + " node " + std::to_string(d.inflight.job.node);
    r.evaluated = d.evaluated;
    r.busy_s = d.busy_s;
    r.joined_s = since(d.joined);
    r.busy_while_queued_s = d.busy_while_queued_s;
    r.queued_s = d.queued_s;
    v.devices.push_back(r);
  }
  v.queued = static_cast<int64_t>(st.queue.size());
  v.dispatched = st.dispatched;
  v.requeued = st.requeued;
  v.uptime_s = since(st.started);
  return v;
}

// A device joins: "" when registered (or registered already), else why it is refused.
std::string register_device(Self self, const DeviceInfo& info, const caf::actor& hdl) {
  if (!hdl) return "no device handle";
  if (!parse_backend(info.backend)) return "backend '" + info.backend + "' (expected " + backend_names() + ")";
  auto& st = self->state;
  account(st);
  for (auto& known : st.devices)
    if (known.alive && known.hdl == hdl) return {};  // registered again after a lost answer: keep the one entry
  if (auto owner = caf::actor_cast<caf::actor>(self->current_sender()))
    if (std::find(st.owners.begin(), st.owners.end(), owner) == st.owners.end()) st.owners.push_back(owner);
  Device d;
  d.hdl = hdl;
  d.info = info;
  self->monitor(hdl);
  for (auto& [problem, blob] : st.specs) caf::anon_send(hdl, atoms::spec_atom::value, problem, blob);
  st.devices.push_back(std::move(d));
  log::info("node") << "device " << info.host << ":" << info.pid << "/" << info.index << " joined (" << info.backend
                    << ", " << info.name << ")";
  dispatch(self);
  return {};
}

// A console's command: pause, resume, cancel and submit go to the search or the engine; the rest are answered
// from the registry's view.
caf::result<std::string> console(Self self, const std::vector<std::string>& words) {
  auto& st = self->state;
  if (!words.empty() && (words[0] == "pause" || words[0] == "resume" || words[0] == "cancel")) {
    if (words.size() != 2) return "error: usage: " + words[0] + " SEARCH\n";
    auto it = st.by_id.find(words[1]);
    if (it == st.by_id.end() || st.statuses[words[1]].finished) {
      std::string running;
      for (auto& [id, s] : st.statuses)
        if (!s.finished) running += (running.empty() ? "" : ", ") + id;
      return "error: search '" + words[1] +
             "' is not running on this node (running: " + (running.empty() ? "none" : running) + ")\n";
    }
    auto rp = self->make_response_promise<std::string>();
    self->request(it->second, std::chrono::seconds(10), atoms::control_atom::value, words[0])
        .then([rp](ActionReply& r) mutable { rp.deliver(r.line() + "\n"); },
              [self, rp](caf::error& e) mutable {
                rp.deliver("error: the search did not answer: " + self->system().render(e) + "\n");
              });
    return rp;
  }
  if (!words.empty() && words[0] == "submit") {
    if (words.size() != 2) return "error: usage: submit CONFIG (a search config file on the node's machine)\n";
    if (!st.engine) return "error: this node does not take submissions yet\n";
    auto rp = self->make_response_promise<std::string>();
    self->request(st.engine, std::chrono::seconds(120), atoms::submit_atom::value, words[1])
        .then([rp](ActionReply& r) mutable { rp.deliver(r.line() + "\n"); },
              [self, rp](caf::error& e) mutable {
                rp.deliver("error: the node did not answer: " + self->system().render(e) + "\n");
              });
    return rp;
  }
  return cluster::console_command(words, view(self));
}

cluster_registry_actor::behavior_type registry(Self self, ClusterRegistrySetup setup) {
  self->state.setup = std::move(setup);
  self->set_down_handler([self](caf::down_msg& m) {
    auto& st = self->state;
    account(st);
    for (auto& d : st.devices)
      if (d.alive && d.hdl.address() == m.source) {
        d.alive = false;
        if (!st.closing)  // after the node told its evaluators it has finished, their leaving is expected
          log::info("node") << "device " << d.info.host << ":" << d.info.pid << "/" << d.info.index << " left ("
                    << self->system().render(m.reason) << ")";
        requeue(self, d, "its evaluator went away");
      }
    dispatch(self);
  });
  // The live search's status, for the console (the search answers within its own loop).
  self->delayed_send(self, std::chrono::seconds(1), atoms::tick_atom::value);
  // The node ends on purpose (its searches finished, or it was stopped): each evaluator is asked to leave,
  // and the registry waits for their answers (at most 10 s: on a loaded machine 2 s was not always enough,
  // and the evaluator then took the node's end for a lost connection) before it stops, so that the request is not lost
  // when the node's network layer closes. An evaluator that does not answer reconnects until its own limit.
  self->set_exit_handler([self](caf::exit_msg& m) {
    auto& st = self->state;
    if (st.closing) return;  // asked already; the answers (or their time-outs) end it
    if (st.owners.empty() || m.reason != caf::exit_reason::user_shutdown) return self->quit(m.reason);
    log::info("node") << "telling " << st.owners.size() << " evaluator(s) that the node has finished";
    st.closing = true;
    auto pending = std::make_shared<size_t>(st.owners.size());
    auto answered = [self, pending] {
      if (--*pending == 0) self->quit(caf::exit_reason::user_shutdown);
    };
    for (auto& owner : st.owners)
      self->request(owner, std::chrono::seconds(10), atoms::control_atom::value, std::string("finished"))
          .then([answered](const ActionReply&) { answered(); }, [answered](caf::error&) { answered(); });
    st.owners.clear();
  });
  return {
      [self](atoms::spec_atom, const std::string& problem, const std::string& blob) {
        self->state.specs[problem] = blob;
        for (auto& d : self->state.devices)
          if (d.alive) caf::anon_send(d.hdl, atoms::spec_atom::value, problem, blob);
      },
      [self](atoms::eval_atom, EvalJob& job) -> caf::typed_response_promise<EvalResult> {
        auto& st = self->state;
        if (!job.device_class.empty() && !st.pins_warned.count(job.search + "|" + job.device_class)) {
          bool any = false;
          for (auto& d : st.devices)
            any = any || (d.alive && d.info.device_class.find(job.device_class) != std::string::npos);
          if (!any) {
            st.pins_warned.insert(job.search + "|" + job.device_class);
            log::info("node") << "search " << job.search << " waits for a device whose class contains '"
                      << job.device_class << "' ([search] device_class); none has joined (see `devices`)\n";
          }
        }
        Pending p{std::move(job), self->make_response_promise<EvalResult>(), 0};
        auto rp = p.promise;
        self->state.queue.push_back(std::move(p));
        dispatch(self);
        return rp;
      },
      [self](atoms::register_atom, const DeviceInfo& info, const caf::actor& hdl) -> std::string {
        return register_device(self, info, hdl);
      },
      [self](atoms::console_atom, const std::vector<std::string>& words) -> caf::result<std::string> {
        return console(self, words);
      },
      [self](atoms::watch_atom, const caf::actor& search) {
        self->state.searches.push_back(search);
        ask_status(self, search);  // its id at once: the console may name it before the next tick
      },
      [self](atoms::engine_atom, const caf::actor& engine) { self->state.engine = engine; },
      [self](atoms::tick_atom) {
        self->delayed_send(self, std::chrono::seconds(1), atoms::tick_atom::value);
        for (auto& s : self->state.searches) ask_status(self, s);
      },
  };
}

}  // namespace

cluster_registry_actor spawn_cluster_registry(caf::actor_system& sys, ClusterRegistrySetup setup) {
  return sys.spawn(registry, std::move(setup));
}

}  // namespace kevolve
