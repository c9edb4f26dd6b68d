// The deep-search agent: owns the knowledge-base index (knowledge/: hardware, patterns, debugging) and
// answers retrieval queries for the operator — including for hardware no model was trained on, whose
// documents and constraints live under knowledge/hardware/<target>/.
#pragma once
#include <memory>

#include "actors/protocol/deep_search.hpp"
#include "knowledge/knowledge_base.hpp"

namespace kevolve {

deep_search_actor spawn_deep_search_actor(caf::actor_system& sys, std::shared_ptr<KnowledgeBase> kb);

}  // namespace kevolve
