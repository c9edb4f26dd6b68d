// The search actor's interface.
//   start  : begin (or resume) proposing
//   state  : a lifecycle step of a node (node id, built / queued / evaluated); the node runner no longer sends it
//   scored : the node runner reports a node's final verdict (one-way, so thousands can be in flight)
//   status : where the search stands
//   tick   : the search's own timer (wall-clock budget); each tick pushes the status to the watcher
//            (the engine: actors/protocol/engine.hpp), as do pause, resume and the end of the search
//   control: "pause" (no new candidates; those in flight finish), "resume", "cancel" (stop for good,
//            recorded as finished) -> an ActionReply: what happened, or why nothing did
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using search_actor =
    caf::typed_actor<caf::reacts_to<atoms::start_atom>, caf::reacts_to<atoms::state_atom, uint64_t, NodeState>,
                     caf::reacts_to<atoms::scored_atom, NodeRecord, EvalResult>,
                     caf::replies_to<atoms::status_atom>::with<SearchStatus>, caf::reacts_to<atoms::tick_atom>,
                     caf::replies_to<atoms::control_atom, std::string>::with<ActionReply>>;

}  // namespace kevolve
