// Spawns the operator actor around an Operator (runtime/operators/): for each proposal it builds the
// child from the parents' records, with the randomness the search drew for it.
#pragma once
#include <memory>

#include "actors/protocol/operator.hpp"
#include "runtime/operators/operator.hpp"

namespace kevolve {

operator_actor spawn_operator_actor(caf::actor_system& sys, std::shared_ptr<Operator> op);

}  // namespace kevolve
