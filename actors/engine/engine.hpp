// The actor-system bootstrap of one `kevolve run`: opens the store, resumes or starts the search, spawns
// the store, operator, compile farm, device registry and search actors, reports progress until the
// search finishes, and shuts everything down. The only place that creates a caf::actor_system.
#pragma once
#include <atomic>
#include <functional>
#include <memory>

#include "actors/protocol/messages.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/problem.hpp"
#include "runtime/run_config.hpp"

namespace kevolve {

struct EngineOptions {
  std::function<void(const SearchStatus&)> progress;  // called about twice a second
  const std::atomic<bool>* interrupted = nullptr;     // set by a signal handler: shut down now (resumable)
  std::atomic<bool>* checkpoint_now = nullptr;        // set by a signal handler: take a checkpoint now
};

// Runs (or resumes) the search of `config` to its end. Returns the final status, or an error (store
// busy, spec mismatch with the stored search, ...). `op` makes the children.
Expected<SearchStatus> run_search(const RunConfig& config, const ProblemSpec& spec, std::shared_ptr<Operator> op,
                                  const EngineOptions& options);

}  // namespace kevolve
