// The engine actor: the loop of one `kevolve run` or `kevolve node` as a typed actor
// (actors/protocol/engine.hpp). It starts the searches it is given (and those the console submits),
// follows them by the status each search actor pushes, ends each finished search (its context memory
// made durable, its actors stopped), takes checkpoints and honours interrupts when the signal flags say
// so, and when everything has ended stops the shared actors (farm, devices, registry, store) and
// itself. What it leaves for its caller is in EngineOutcome.
//
//   start ─► for each search: spawn operator, memory, search actors (watcher = engine)
//   progress ─► remember; finished? ─► flush memory ─► stop its actors ─► all ended? ─► close
//   tick (100 ms) ─► checkpoint flag ─► store ckpt;  interrupt flag ─► close (resumable)
//   registry down ─► close loudly
//   close ─► stop searches still running ─► stop shared actors ─► quit
#pragma once
#include <memory>
#include <optional>

#include "actors/protocol/run_search.hpp"
#include "runtime/resume/load_search.hpp"
#include "actors/protocol/build.hpp"
#include "actors/protocol/cluster.hpp"
#include "actors/protocol/engine.hpp"
#include "actors/protocol/store.hpp"

namespace kevolve {

// What every search of one engine shares: the store, the compile farm, the devices (local registry or
// the cluster registry).
struct EngineShared {
  std::shared_ptr<Store> store;
  std::string store_path;
  store_actor store_hdl;
  std::string checkpoints;  // where checkpoints go (the store's path + ".checkpoints")
  build_actor builds;
  device_actor devices;
  cluster_registry_actor cluster;  // on a node
  std::string backend;             // every search of this engine uses it
};

// Filled by the engine actor for its caller, read after the actor system has stopped.
struct EngineOutcome {
  SearchStatus first;        // the first search's last status (or its stored one)
  bool interrupted = false;  // a signal, or the node's network-facing actors stopped
};

struct EngineStart {
  EngineShared shared;
  std::optional<LoadedSearch> first;  // none: the first search is already finished in the store
  std::shared_ptr<Operator> first_op;
  SearchStatus first_stored;  // its stored status when it is finished
  EngineOptions options;
  std::shared_ptr<EngineOutcome> outcome;
};

// Spawned detached: it calls the caller's callbacks (progress, prepare, on_finished), which may block.
engine_actor spawn_engine_actor(caf::actor_system& sys, EngineStart start);

}  // namespace kevolve
