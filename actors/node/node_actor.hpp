// Spawns a node actor: the lifecycle of one candidate in flight.
//
//   proposed ──build──► built ──enqueue──► queued ──device──► evaluated ──► scored ──► (reported, quits)
//      │                                                                      ▲
//      └── build decided (compile_error, rejected by the source scan) ────────┘
//
// The node tells the search once, with a one-way message when it is scored, so the search never holds
// thousands of outstanding requests; the steps in between are the node's own (the search's graph counts a
// node in flight until it is scored, and nothing reads the steps from it). A failure of the farm or the
// device (an actor error) is reported as harness_error rather than lost.
#pragma once
#include "actors/protocol/build.hpp"
#include "actors/protocol/device.hpp"
#include "actors/protocol/node.hpp"
#include "actors/protocol/search.hpp"

namespace kevolve {

struct NodeTask {
  std::string search, problem, backend;
  NodeRecord node;
  Candidate candidate;
  EvalOptions options;
  std::string device_class;  // [search] device_class: only devices whose class contains this evaluate it ("" = any)
};

node_actor spawn_node_actor(caf::actor_system& sys, search_actor search, build_actor builds, device_actor devices,
                            NodeTask task);

}  // namespace kevolve
