#include "actors/node/node_actor.hpp"

#include "backends/backend.hpp"
#include "backends/build_target.hpp"
#include "runtime/records/backend_kind.hpp"
#include "runtime/core/seconds_text.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>

namespace kevolve {
namespace {

// One node in flight: its task, its build (kept for an evaluation taken again) and timeline (started, built: the
// build answered).
struct InFlight {
  NodeTask task;
  std::unique_ptr<BuildOutcome> build;  // once built
  std::chrono::steady_clock::time_point started, built;
  int busy_retakes = 0;  // evaluations taken again because the machine was too busy to time them
};

struct RunnerState {
  std::unordered_map<uint64_t, InFlight> nodes;  // by the runner's own sequence number (a resume may repeat ids)
  uint64_t next = 0;
  // Nodes waiting for the build farm and for a device, and the requests out at each. A request out is an entry
  // in CAF's table of awaited responses, which is a flat vector (each answer erases from it): the runner keeps at
  // most kMaxOut out per stage, and the rest wait here as keys, not as jobs.
  std::deque<uint64_t> to_build, to_evaluate;
  int building = 0, evaluating = 0;
  NodeRun run;
  caf::weak_actor_ptr search;
  build_actor builds;
  device_actor devices;
  static inline const char* name = "node";
};

// A verdict of `harness_error [busy]` says nothing about the candidate (other work on the machine made its
// timing worthless): the node has it evaluated again, this many times at most, before it reports it.
constexpr int kBusyRetakes = 2;

// Requests out at once per stage (build, evaluation): far more than the workers of a farm or the devices of a
// registry take at once, so that their queues never run dry.
constexpr int kMaxOut = 512;

using Self = node_actor::stateful_pointer<RunnerState>;

// Sends the node's verdict to the search and forgets the node.
void report(Self self, uint64_t key, EvalResult r) {
  auto& s = self->state;
  auto it = s.nodes.find(key);
  if (it == s.nodes.end()) return;
  InFlight& f = it->second;
  // Where the time went, first in the profile: the build farm's queue and compile, then the device's queue
  // and evaluation (its own line, "on the device", says how much of that it spent; the rest was queueing).
  const auto now = std::chrono::steady_clock::now();
  const bool built = f.built.time_since_epoch().count() != 0;
  std::string timeline = "timeline: build (queue + compile) " + seconds_text((built ? f.built : now) - f.started);
  if (built) timeline.append(", device (queue + evaluation) ").append(seconds_text(now - f.built));
  timeline.push_back('\n');
  r.profile.insert(0, timeline);
  auto& n = f.task.node;
  n.state = NodeState::scored;
  n.status = r.status;
  n.reason = r.reason;
  n.message = r.message;
  n.fitness = r.status == EvalStatus::ok ? r.speedup : 0.0;
  n.candidate_ms = r.candidate.median_ms;
  n.reference_ms = r.reference.median_ms;
  n.device_class = r.device_class;
  if (auto search = caf::actor_cast<search_actor>(s.search.lock()))
    self->send(search, atoms::scored_atom::value, std::move(n), std::move(r));
  s.nodes.erase(it);
}

EvalResult harness_failure(const std::string& where, const caf::error& e, Self self) {
  EvalResult r;
  r.status = EvalStatus::harness_error;
  r.reason = where;
  r.message = where + " failed: " + self->system().render(e);
  return r;
}

void pump(Self self);

void evaluate(Self self, uint64_t key) {
  auto it = self->state.nodes.find(key);
  if (it == self->state.nodes.end()) return;
  ++self->state.evaluating;
  auto& t = it->second.task;
  const NodeRun& run = self->state.run;
  t.node.state = NodeState::queued;
  EvalJob job{run.search,
              t.node.id,
              run.backend,
              run.problem,
              t.node.params,
              *it->second.build,
              run.options,
              {},
              build_target(run.backend, run.options),
              {},
              run.device_class};
  // The source goes along for an evaluator that rebuilds it for its own target; a backend that evaluates
  // nothing (null) never reads it.
  if (backend_traits(run.backend).evaluates) job.candidate = t.candidate;
  self->request(self->state.devices, caf::infinite, atoms::eval_atom::value, std::move(job))
      .then(
          [self, key](EvalResult r) {
            --self->state.evaluating;
            pump(self);
            auto it = self->state.nodes.find(key);
            if (it == self->state.nodes.end()) return;
            InFlight& f = it->second;
            if (r.status == EvalStatus::harness_error && r.reason == "busy" && f.busy_retakes < kBusyRetakes) {
              ++f.busy_retakes;
              self->state.to_evaluate.push_back(key);
              return pump(self);
            }
            remove_build_dir(f.build->dir);
            f.task.node.state = NodeState::evaluated;
            if (f.busy_retakes > 0)
              r.profile = "evaluated again " + std::to_string(f.busy_retakes) +
                          " time(s): the machine was too busy to time it\n" + r.profile;
            report(self, key, std::move(r));
          },
          [self, key](caf::error& e) {
            --self->state.evaluating;
            pump(self);
            if (auto it = self->state.nodes.find(key); it != self->state.nodes.end())
              remove_build_dir(it->second.build->dir);
            report(self, key, harness_failure("device", e, self));
          });
}

// Asks the build farm for a node.
void build(Self self, uint64_t key) {
  auto& s = self->state;
  auto it = s.nodes.find(key);
  if (it == s.nodes.end()) return;
  ++s.building;
  auto& t = it->second.task;
  const NodeRun& run = s.run;
  // A backend that evaluates nothing never reads the source again: it goes to the build without a copy.
  BuildJob job{run.backend, backend_traits(run.backend).evaluates ? t.candidate : std::move(t.candidate),
               run.options};
  self->request(s.builds, caf::infinite, atoms::build_atom::value, std::move(job))
      .then(
          [self, key](BuildOutcome o) {
            --self->state.building;
            if (o.decided) {
              report(self, key, std::move(o.verdict));
              return pump(self);
            }
            auto it = self->state.nodes.find(key);
            if (it == self->state.nodes.end()) return pump(self);
            it->second.built = std::chrono::steady_clock::now();
            it->second.task.node.state = NodeState::built;
            it->second.build = std::make_unique<BuildOutcome>(std::move(o));
            self->state.to_evaluate.push_back(key);
            pump(self);
          },
          [self, key](caf::error& e) {
            --self->state.building;
            report(self, key, harness_failure("build", e, self));
            pump(self);
          });
}

// Sends waiting nodes on, oldest first, while fewer than kMaxOut requests are out at their stage.
void pump(Self self) {
  auto& s = self->state;
  while (s.evaluating < kMaxOut && !s.to_evaluate.empty()) {
    const uint64_t key = s.to_evaluate.front();
    s.to_evaluate.pop_front();
    evaluate(self, key);
  }
  while (s.building < kMaxOut && !s.to_build.empty()) {
    const uint64_t key = s.to_build.front();
    s.to_build.pop_front();
    build(self, key);
  }
}

// Takes a node in: it waits for the build farm from now.
void start(Self self, NodeTask task) {
  auto& s = self->state;
  const uint64_t key = s.next++;
  InFlight& f = s.nodes[key];
  f.task = std::move(task);
  f.started = std::chrono::steady_clock::now();
  s.to_build.push_back(key);
}

node_actor::behavior_type runner(Self self, NodeRun run, caf::weak_actor_ptr search, build_actor builds,
                                 device_actor devices) {
  self->state.run = std::move(run);
  self->state.search = std::move(search);
  self->state.builds = std::move(builds);
  self->state.devices = std::move(devices);
  return {
      [self](atoms::start_atom, std::vector<NodeTask>& tasks) {
        for (auto& t : tasks) start(self, std::move(t));
        pump(self);
      },
  };
}

}  // namespace

node_actor spawn_node_runner(caf::local_actor* search, NodeRun run, build_actor builds, device_actor devices) {
  return search->spawn<caf::linked>(runner, std::move(run), caf::weak_actor_ptr{search->ctrl()}, std::move(builds),
                                    std::move(devices));
}

}  // namespace kevolve
