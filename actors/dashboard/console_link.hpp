// The dashboard's way to the engine: the console's own message (console_atom, words) to the cluster
// registry (actors/protocol/cluster.hpp), asked from the server's threads with a scoped actor.
#pragma once
#include <caf/fwd.hpp>

#include "runtime/dashboard/dashboard_api.hpp"

namespace kevolve::dashboard {

// A Console that asks `registry`; each answer within `timeout_s`, else an error naming what happened.
// Callable from any thread while `sys` lives.
Console console_link(caf::actor_system& sys, const caf::actor& registry, double timeout_s = 10);

}  // namespace kevolve::dashboard
