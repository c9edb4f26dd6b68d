// The store actor's interface: writes are batched and synced together (group commit).
//   write  : fire-and-forget (scored nodes, artifacts). A write that fails is not forgotten: every later
//            commit answers with that failure (how many entries were lost and why), so a search never
//            ends as if saved when part of it was not.
//   commit : replies once the batch holding it is durable: Status ok, or the failure (Errc::io)
//   ckpt   : a RocksDB checkpoint into the given folder; replies Status ok with the folder as its
//            message, or the failure
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using store_actor = caf::typed_actor<caf::reacts_to<atoms::write_atom, StoreBatch>,
                                     caf::replies_to<atoms::commit_atom, StoreBatch>::with<Status>,
                                     caf::replies_to<atoms::ckpt_atom, std::string>::with<Status>,
                                     caf::reacts_to<atoms::flush_atom>, caf::reacts_to<atoms::tick_atom>>;

}  // namespace kevolve
