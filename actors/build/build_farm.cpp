#include "runtime/records/backend_kind.hpp"
#include "actors/build/build_farm.hpp"

#include "actors/farm/farm.hpp"
#include "backends/backend.hpp"

namespace kevolve {
namespace {

build_actor::behavior_type build_worker(build_actor::pointer) {
  return {
      [](atoms::build_atom, const BuildJob& job) -> BuildOutcome {
        BuildOutcome o;
        o.entry = job.candidate.entry;
        if (!backend_traits(job.backend).evaluates) {
          o.build.status = Status::success();
          return o;
        }
        BuiltCandidate b = build_candidate(job.backend, job.candidate, job.options);
        o.build = b.build;
        o.dir = b.dir;
        if (b.verdict) {
          o.decided = true;
          o.verdict = *b.verdict;
        }
        return o;
      },
  };
}

struct BuildFarmState : FarmState<build_actor, atoms::build_atom, BuildJob, BuildOutcome> {
  static inline const char* name = "build-farm";
};

build_actor::behavior_type build_farm(build_actor::stateful_pointer<BuildFarmState> self, int workers, bool blocking) {
  for (int i = 0; i < workers; ++i) {
    // Compilers block: such workers get threads of their own; the null backend's do not need them.
    self->state.workers.push_back(blocking ? self->spawn<caf::detached + caf::linked>(build_worker)
                                           : self->spawn<caf::linked>(build_worker));
    self->state.busy.push_back(0);
  }
  return {
      [self](atoms::build_atom, BuildJob& job) -> caf::typed_response_promise<BuildOutcome> {
        auto rp = self->make_response_promise<BuildOutcome>();
        self->state.queue.emplace_back(std::move(job), rp);
        farm_dispatch<std::remove_pointer_t<decltype(self)>, BuildFarmState, atoms::build_atom, BuildJob, BuildOutcome>(
            self, self->state);
        return rp;
      },
  };
}

}  // namespace

build_actor spawn_build_farm(caf::actor_system& sys, int workers, bool blocking) {
  return sys.spawn(build_farm, workers, blocking);
}

}  // namespace kevolve
