// The deep-search actor's interface: the knowledge-base documents that best answer a query built from a
// node's context, filtered by hardware target and problem (BM25 over knowledge/).
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using deep_search_actor = caf::typed_actor<caf::replies_to<atoms::kb_atom, KbQuery>::with<std::vector<KbHit>>>;

}  // namespace kevolve
