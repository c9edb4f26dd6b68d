// The context-memory agent: turns each scored node's verdict into a diagnosis with directives
// (runtime/operators/diagnosis) stored with the node, and keeps the Lessons of this problem on this
// backend and hardware (runtime/memory/lessons) in the store, where the next search starts from them.
#pragma once
#include <memory>

#include "actors/protocol/memory.hpp"
#include "actors/protocol/store.hpp"
#include "runtime/memory/lessons.hpp"
#include "runtime/records/problem.hpp"
#include "storage/store.hpp"

namespace kevolve {

struct MemorySetup {
  ProblemSpec spec;
  std::string backend;
  Lessons lessons;                // as recalled at start (key set even when nothing was stored yet)
  store_actor store;              // writes
  std::shared_ptr<Store> reader;  // reads the sources of new best kernels
};

memory_actor spawn_memory_actor(caf::actor_system& sys, MemorySetup setup);

}  // namespace kevolve
