// Spawns a search's node runner: the lifecycle of every candidate the search has in flight.
//
//   proposed ──build──► built ──enqueue──► queued ──device──► evaluated ──► scored ──► (reported, forgotten)
//      │                                                                      ▲
//      └── build decided (compile_error, rejected by the source scan) ────────┘
//
// One actor per search, not one per candidate: the search sends each committed batch of nodes in one message,
// and a node costs the runner one entry in a table while in flight (no actor spawned, started and torn down
// per candidate). Each node tells the search once, with a one-way message when it is scored, so the search
// never holds thousands of outstanding requests; the steps in between are the runner's own. A failure of the
// farm or the device (an actor error) is reported as harness_error rather than lost. At most a few hundred
// requests are out per stage; the other nodes wait in the runner as table entries (no job built for them yet).
//
// The runner is linked to the search (it ends with it) and holds it weakly: a search nobody holds any more
// still ends. The search ends its runner when it finishes.
#pragma once
#include "actors/protocol/build.hpp"
#include "actors/protocol/device.hpp"
#include "actors/protocol/node.hpp"
#include "actors/protocol/search.hpp"

namespace kevolve {

node_actor spawn_node_runner(caf::local_actor* search, NodeRun run, build_actor builds, device_actor devices);

}  // namespace kevolve
