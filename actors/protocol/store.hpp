// The store actor's interface: writes are batched and synced together (group commit).
//   write  : fire-and-forget (scored nodes, artifacts)
//   commit : replies once the batch holding it is durable (new nodes, before they are dispatched)
//   ckpt   : a RocksDB checkpoint into the given folder; replies with the folder or an error text
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using store_actor = caf::typed_actor<caf::reacts_to<atoms::write_atom, StoreBatch>,
                                     caf::replies_to<atoms::commit_atom, StoreBatch>::with<bool>,
                                     caf::replies_to<atoms::ckpt_atom, std::string>::with<std::string>,
                                     caf::reacts_to<atoms::flush_atom>, caf::reacts_to<atoms::tick_atom>>;

}  // namespace kevolve
