// The compile farm's interface (a farm and each of its build workers speak it alike).
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using build_actor = caf::typed_actor<caf::replies_to<atoms::build_atom, BuildJob>::with<BuildOutcome>>;

}  // namespace kevolve
