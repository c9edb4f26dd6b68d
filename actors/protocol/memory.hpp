// The context-memory actor's interface:
//   scored : one scored node (one-way) -> its diagnosis is written with the node, the lessons of its
//            problem/backend/hardware are updated
//   flush  : the lessons and every pending diagnosis are made durable; replies true when they are
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using memory_actor =
    caf::typed_actor<caf::reacts_to<atoms::scored_atom, ScoredNote>, caf::replies_to<atoms::flush_atom>::with<Status>>;

}  // namespace kevolve
