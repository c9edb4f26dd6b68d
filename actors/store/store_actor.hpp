// Spawns the store actor (detached: RocksDB syncs block). It owns the Store; batches writes and commits
// them with one synced write every `flush_every` entries or 2 ms after the first pending one; takes a
// checkpoint into `checkpoint_dir`/<timestamp> every `checkpoint_seconds` (0 = never), keeping two.
#pragma once
#include <memory>

#include "actors/protocol/store.hpp"
#include "storage/store.hpp"

namespace kevolve {

// own_thread = false schedules it like any actor (for CAF's deterministic test coordinator, which runs only
// scheduled actors).
store_actor spawn_store_actor(caf::actor_system& sys, std::shared_ptr<Store> store, std::string checkpoint_dir,
                              double checkpoint_seconds, bool own_thread = true);

// Removes checkpoint folders left half-written by a crash (names ending in .tmp or .partial).
void clean_partial_checkpoints(const std::string& checkpoint_dir);

}  // namespace kevolve
