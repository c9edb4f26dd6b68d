// The node's side of each authenticated cluster link (runtime/net/cluster_link.hpp): one bridge actor per
// connection turns the frames its role may send into messages to the cluster registry, and nothing else.
//
//   evaluator link: register (of the host whose key the link proved) -> a device actor of the node's own (remote_device) that stands for the
//                   evaluator's device and is registered with the registry; result -> that device, which
//                   delivers it only for a job it sent; the registry's "finished" -> a finished frame.
//   console link:   ask -> the registry's console command -> answer.
// Any other frame, a malformed one, or a device index it did not register closes the link. The bridge ends
// with its link or with the registry, and its remote devices end with it (the registry then re-queues
// their jobs).
#pragma once
#include <memory>

#include <caf/fwd.hpp>

#include "runtime/net/cluster_link.hpp"

namespace kevolve::cluster {

// Spawns the bridge for `link` (its role decides which) and returns the link's handlers, which hand every
// frame to it. Thread-safe; called on the link's I/O thread.
net::LinkHandlers bridge_link(caf::actor_system& sys, std::shared_ptr<net::Link> link, const caf::actor& registry);

}  // namespace kevolve::cluster
