// The client side of the gatekeeper: connect to a coordinator, prove the shared secret for a role, and
// receive the cluster registry's handle. Used by evaluators and the console.
#pragma once
#include <caf/fwd.hpp>

#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::cluster {

struct JoinError {
  std::string text;
  bool refused = false;  // the coordinator answered and said no (wrong secret): retrying will not help
};

// The registry handle, or why not (connection failed, timed out, refused).
// `tls`: connect through CAF's OpenSSL module (the actor system must have been configured with it).
Expected<caf::actor> join(caf::actor_system& sys, const std::string& host, uint16_t port, const std::string& secret,
                          const std::string& role, JoinError* why = nullptr, bool tls = false);

// The shared secret from the environment variable `var`, or an error that names the variable.
Expected<std::string> secret_from_env(const std::string& var);

}  // namespace kevolve::cluster
