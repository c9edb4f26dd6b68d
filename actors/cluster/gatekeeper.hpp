// The only actor a coordinator publishes. A peer asks for a challenge, answers it with the HMAC of the
// shared secret, and only then receives the cluster registry's handle. Wrong or replayed proofs are
// refused and logged to stderr; challenges are single use and expire after a minute.
#pragma once
#include "actors/protocol/cluster.hpp"

namespace kevolve {

gatekeeper_actor spawn_gatekeeper(caf::actor_system& sys, std::string secret, caf::actor registry);

}  // namespace kevolve
