// The cluster interfaces. A coordinator (`kevolve node`) listens for authenticated cluster links only
// (runtime/net/cluster_link.hpp); a bridge actor per link (actors/cluster/peer_bridge.hpp) turns the frames
// of its role into these messages, so no remote peer ever holds a handle of the node's actors.
//
//   registry    (the device interface: spec, eval — the search's nodes send their jobs here)
//               register, DeviceInfo, device   -> "" or the reason it was refused (sent by an evaluator
//                                                 link's bridge, the device being the bridge's stand-in)
//               console, words                 -> the command's answer (text, or JSON with --json)
//               watch, search                  -> a live search, for the console's status queries and controls
//               engine, engine                 -> where the console's `submit PATH` goes (the engine actor)
#pragma once
#include "actors/protocol/device.hpp"

namespace kevolve {

using cluster_registry_actor =
    device_actor::extend<caf::replies_to<atoms::register_atom, DeviceInfo, caf::actor>::with<std::string>,
                         caf::replies_to<atoms::console_atom, std::vector<std::string>>::with<std::string>,
                         caf::reacts_to<atoms::watch_atom, caf::actor>, caf::reacts_to<atoms::tick_atom>,
                         caf::reacts_to<atoms::engine_atom, caf::actor>>;

}  // namespace kevolve
