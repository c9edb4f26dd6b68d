// The node actor's interface: one per candidate in flight; it drives its own lifecycle once started.
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using node_actor = caf::typed_actor<caf::reacts_to<atoms::start_atom>>;

}  // namespace kevolve
