// The operator actor's interface: make children for a batch of proposals (one reply per request).
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using operator_actor =
    caf::typed_actor<caf::replies_to<atoms::make_atom, std::vector<MakeRequest>>::with<std::vector<MakeReply>>>;

}  // namespace kevolve
