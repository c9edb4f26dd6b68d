// The engine actor's interface: the loop of one `kevolve run` or `kevolve node` (actors/engine/).
//   progress, status : a search's status, pushed by its search actor on every tick (250 ms), on pause
//                      and resume, and once when it has finished (and its end is in the store)
//   submit, path     : the console's `submit PATH`, relayed by the cluster registry -> an ActionReply:
//                      "started ..." or why the search was not started
//   tick             : the engine's own timer: checks the signal flags (interrupt, checkpoint)
// It also monitors the cluster registry: should it stop, the node stops loudly.
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using engine_actor = caf::typed_actor<caf::reacts_to<atoms::progress_atom, SearchStatus>,
                                      caf::replies_to<atoms::submit_atom, std::string>::with<ActionReply>,
                                      caf::reacts_to<atoms::tick_atom>>;

}  // namespace kevolve
