// The client side of the gatekeeper: connect to a coordinator, prove the shared secret for a role, and
// receive the cluster registry's handle. Used by evaluators and the console.
#pragma once
#include <caf/fwd.hpp>

#include <string>

#include "actors/cluster/front_door.hpp"
#include "runtime/core/expected.hpp"

namespace kevolve::cluster {

struct JoinError {
  std::string text;
  bool refused = false;  // the coordinator answered and said no (wrong secret): retrying will not help
};

// The registry handle, or why not (connection failed, timed out, refused). The connection goes through
// the node's front door (actors/cluster/front_door.hpp): proven for `role`, with TLS when `tls` is on,
// then CAF speaks over a loopback tunnel that lives as long as the process.
Expected<caf::actor> join(caf::actor_system& sys, const std::string& host, uint16_t port, const std::string& secret,
                          const std::string& role, JoinError* why = nullptr, const DoorTls& tls = {});

// The shared secret from the environment variable `var`, or an error that names the variable.
Expected<std::string> secret_from_env(const std::string& var);

}  // namespace kevolve::cluster
