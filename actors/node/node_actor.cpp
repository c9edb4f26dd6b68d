#include "actors/node/node_actor.hpp"

#include "backends/backend.hpp"
#include "backends/build_target.hpp"
#include "runtime/records/backend_kind.hpp"
#include "runtime/core/seconds_text.hpp"

#include <chrono>

namespace kevolve {
namespace {

struct NodeActorState {
  NodeTask task;
  // The node's timeline: started, built (the build answered), scored (the device answered).
  std::chrono::steady_clock::time_point started, built;
  search_actor search;
  build_actor builds;
  device_actor devices;
  int busy_retakes = 0;  // evaluations taken again because the machine was too busy to time them
  static inline const char* name = "node";
};

// A verdict of `harness_error [busy]` says nothing about the candidate (other work on the machine made its
// timing worthless): the node has it evaluated again, this many times at most, before it reports it.
constexpr int kBusyRetakes = 2;

using Self = node_actor::stateful_pointer<NodeActorState>;

void report(Self self, EvalResult r) {
  // Where the time went, first in the profile: the build farm's queue and compile, then the device's queue
  // and evaluation (its own line, "on the device", says how much of that it spent; the rest was queueing).
  const auto now = std::chrono::steady_clock::now();
  auto& s = self->state;
  const bool built = s.built.time_since_epoch().count() != 0;
  r.profile = "timeline: build (queue + compile) " + seconds_text((built ? s.built : now) - s.started) +
              (built ? ", device (queue + evaluation) " + seconds_text(now - s.built) : std::string()) + "\n" +
              r.profile;
  auto& n = self->state.task.node;
  n.state = NodeState::scored;
  n.status = r.status;
  n.reason = r.reason;
  n.message = r.message;
  n.fitness = r.status == EvalStatus::ok ? r.speedup : 0.0;
  n.candidate_ms = r.candidate.median_ms;
  n.reference_ms = r.reference.median_ms;
  n.device_class = r.device_class;
  self->send(self->state.search, atoms::scored_atom::value, std::move(n), std::move(r));
  self->quit();
}

EvalResult harness_failure(const std::string& where, const caf::error& e, Self self) {
  EvalResult r;
  r.status = EvalStatus::harness_error;
  r.reason = where;
  r.message = where + " failed: " + self->system().render(e);
  return r;
}

void evaluate(Self self, BuildOutcome built) {
  auto& t = self->state.task;
  t.node.state = NodeState::queued;
  EvalJob job{t.search,
              t.node.id,
              t.backend,
              t.problem,
              t.node.params,
              built,
              t.options,
              {},
              build_target(t.backend, t.options),
              {},
              t.device_class};
  // The source goes along for an evaluator that rebuilds it for its own target; a backend that evaluates
  // nothing (null) never reads it.
  if (backend_traits(t.backend).evaluates) job.candidate = t.candidate;
  self->request(self->state.devices, caf::infinite, atoms::eval_atom::value, std::move(job))
      .then(
          [self, built](EvalResult r) {
            if (r.status == EvalStatus::harness_error && r.reason == "busy" &&
                self->state.busy_retakes < kBusyRetakes) {
              ++self->state.busy_retakes;
              return evaluate(self, built);
            }
            remove_build_dir(built.dir);
            self->state.task.node.state = NodeState::evaluated;
            if (self->state.busy_retakes > 0)
              r.profile = "evaluated again " + std::to_string(self->state.busy_retakes) +
                          " time(s): the machine was too busy to time it\n" + r.profile;
            report(self, std::move(r));
          },
          [self, dir = built.dir](caf::error& e) {
            remove_build_dir(dir);
            report(self, harness_failure("device", e, self));
          });
}

node_actor::behavior_type node(Self self, search_actor search, build_actor builds, device_actor devices,
                               NodeTask task) {
  self->state.task = std::move(task);
  self->state.search = std::move(search);
  self->state.builds = std::move(builds);
  self->state.devices = std::move(devices);
  return {
      [self](atoms::start_atom) {
        self->state.started = std::chrono::steady_clock::now();
        auto& t = self->state.task;
        BuildJob job{t.backend, t.candidate, t.options};
        self->request(self->state.builds, caf::infinite, atoms::build_atom::value, std::move(job))
            .then(
                [self](BuildOutcome o) {
                  if (o.decided) return report(self, std::move(o.verdict));
                  self->state.built = std::chrono::steady_clock::now();
                  self->state.task.node.state = NodeState::built;
                  evaluate(self, std::move(o));
                },
                [self](caf::error& e) { report(self, harness_failure("build", e, self)); });
      },
  };
}

}  // namespace

node_actor spawn_node_actor(caf::actor_system& sys, search_actor search, build_actor builds, device_actor devices,
                            NodeTask task) {
  auto n = sys.spawn(node, std::move(search), std::move(builds), std::move(devices), std::move(task));
  caf::anon_send(n, atoms::start_atom::value);
  return n;
}

}  // namespace kevolve
