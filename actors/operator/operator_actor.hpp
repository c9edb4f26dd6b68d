// Spawns the operator actor around an Operator (runtime/operators/): for each proposal it builds the
// child from the parents' records, with the randomness the search drew for it. With a deep-search agent,
// it first retrieves the knowledge the operator asks for (knowledge_query) and hands it to make().
#pragma once
#include <memory>
#include <string>

#include "actors/protocol/deep_search.hpp"
#include "actors/protocol/operator.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/search/graph.hpp"

namespace kevolve {

// The parameter index the search actor of `search` shares with this operator's graph of that search (both in
// this process): the hashes are then held once, and the search need not send the operator every node.
struct SharedParams {
  std::string search;
  std::shared_ptr<ParamIndex> index;
};

operator_actor spawn_operator_actor(caf::actor_system& sys, std::shared_ptr<Operator> op, deep_search_actor deep = {},
                                    SharedParams shared = {});

}  // namespace kevolve
