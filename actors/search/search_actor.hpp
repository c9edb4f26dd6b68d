// Spawns the search actor: one per search. It owns the graph and the strategy, asks the operator for
// children, makes every new node durable in the store before spawning its node actor, records every
// verdict, and stops on the budget (evaluations, seconds, no improvement, target speedup).
//
//   start ─► resume in-flight nodes ─► fill: propose → operator → commit → spawn node actors
//   scored ─► graph + store + strategy.observe ─► stop? ─► fill
//   finished when stopping (or the strategy has nothing left) and nothing is in flight
#pragma once
#include <memory>
#include <utility>

#include "actors/protocol/build.hpp"
#include "actors/protocol/device.hpp"
#include "actors/protocol/engine.hpp"
#include "actors/protocol/operator.hpp"
#include "actors/protocol/search.hpp"
#include "actors/protocol/store.hpp"
#include "actors/protocol/memory.hpp"
#include "runtime/resume/search_plan.hpp"

namespace kevolve {

// The search's plan (runtime/resume/search_plan.hpp, what load_search reads from the store) and the actors it
// talks to.
struct SearchSetup : SearchPlan {
  SearchSetup() = default;
  explicit SearchSetup(SearchPlan plan) : SearchPlan(std::move(plan)) {}
  store_actor store;
  operator_actor op;
  build_actor builds;
  device_actor devices;
  memory_actor memory;   // context memory (diagnoses, lessons); none with the null backend
  engine_actor watcher;  // receives the search's status pushes (progress); may be none
};

search_actor spawn_search_actor(caf::actor_system& sys, SearchSetup setup);

}  // namespace kevolve
