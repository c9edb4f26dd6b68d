// Spawns the search actor: one per search. It owns the graph and the strategy, asks the operator for
// children, makes every new node durable in the store before spawning its node actor, records every
// verdict, and stops on the budget (evaluations, seconds, no improvement, target speedup).
//
//   start ─► resume in-flight nodes ─► fill: propose → operator → commit → spawn node actors
//   scored ─► graph + store + strategy.observe ─► stop? ─► fill
//   finished when stopping (or the strategy has nothing left) and nothing is in flight
#pragma once
#include <map>
#include <memory>

#include "actors/protocol/build.hpp"
#include "actors/protocol/device.hpp"
#include "actors/protocol/engine.hpp"
#include "actors/protocol/operator.hpp"
#include "actors/protocol/search.hpp"
#include "actors/protocol/store.hpp"
#include "actors/protocol/memory.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/problem.hpp"
#include "runtime/config/run_config.hpp"
#include "runtime/search/strategy.hpp"  // StoredNodes

namespace kevolve {

struct SearchSetup {
  RunConfig config;
  ProblemSpec spec;
  SearchRecord record;                       // new, or as stored (resume)
  std::vector<NodeRecord> nodes;             // as stored (resume), where stored_nodes is not given
  StoredNodes stored_nodes;                  // resume: reads the stored nodes one at a time (load_stored)
  std::map<uint64_t, Candidate> unfinished;  // sources of stored nodes that were never scored
  bool keep_context = false;                 // the operator wants sources and reports (LLM)
  size_t operator_window = 0;                // the operator's Operator::history_window() (0 = every node)
  // The operator's concurrency() when its make() blocks (LLM calls): proposals then go one per request, up to
  // this many at once, so each child returns as soon as its reply does. 0: batched, two requests at most.
  int operator_lanes = 0;
  std::shared_ptr<ParamIndex> params;        // shared with the operator actor's graph (this process); none: its own
  std::map<uint64_t, NodeContext> contexts;  // as stored (resume), when keep_context
  store_actor store;
  operator_actor op;
  build_actor builds;
  device_actor devices;
  memory_actor memory;   // context memory (diagnoses, lessons); none with the null backend
  engine_actor watcher;  // receives the search's status pushes (progress); may be none
};

search_actor spawn_search_actor(caf::actor_system& sys, SearchSetup setup);

}  // namespace kevolve
