// The cluster interfaces. A coordinator (`kevolve node`) publishes only its gatekeeper; evaluators and
// consoles prove the shared secret to it and receive the cluster registry's handle in exchange.
//
//   gatekeeper  hello                          -> a fresh challenge (hex nonce, single use)
//               prove, nonce, role, mac        -> ("", registry) or (reason, invalid handle)
//               mac = hex HMAC-SHA256(secret, nonce + "|" + role); role = evaluator | console
//   registry    (the device interface: spec, eval — the search's nodes send their jobs here)
//               register, DeviceInfo, device   -> "" or the reason it was refused
//               console, words                 -> the command's answer (text, or JSON with --json)
//               watch, search                  -> a live search, for the console's status queries and controls
//               engine, engine                 -> where the console's `submit PATH` goes (the engine actor)
// Remote peers hold plain caf::actor handles (typed handles do not travel); the typed aliases below
// are what the coordinator's own actors use.
#pragma once
#include "actors/protocol/device.hpp"

namespace kevolve {

using gatekeeper_actor = caf::typed_actor<
    caf::replies_to<atoms::hello_atom>::with<std::string>,
    caf::replies_to<atoms::prove_atom, std::string, std::string, std::string>::with<std::string, caf::actor>>;

using cluster_registry_actor =
    device_actor::extend<caf::replies_to<atoms::register_atom, DeviceInfo, caf::actor>::with<std::string>,
                         caf::replies_to<atoms::console_atom, std::vector<std::string>>::with<std::string>,
                         caf::reacts_to<atoms::watch_atom, caf::actor>, caf::reacts_to<atoms::tick_atom>,
                         caf::reacts_to<atoms::engine_atom, caf::actor>>;

}  // namespace kevolve
