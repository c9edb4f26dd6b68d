// The project-wide CAF type-ID block: every message type and atom of kevolve, with its `inspect` (each written
// from the type's field list).
// Registered once in the actor-system config (actors/engine/engine.cpp); a type missing here fails
// at run time when it crosses a network, so every message struct must be listed.
#pragma once
#include <caf/all.hpp>

#include "actors/protocol/message_fields.hpp"
#include "actors/protocol/messages.hpp"
#include "runtime/records/fields.hpp"

namespace kevolve {

// CAF's inspect of a record or message, written from its one field list under its name: the records' lists
// are in runtime/records/fields.hpp, the messages' (and Proposal's) in actors/protocol/message_fields.hpp.
// A protocol header with a message struct of its own gives it a fields() list and uses this too.
#define KEVOLVE_INSPECT_FIELDS(T)                                                    \
  template <class F>                                                                 \
  typename F::result_type inspect(F& f, T& x) {                                      \
    return fields(x, [&](auto&... m) { return f(caf::meta::type_name(#T), m...); }); \
  }

KEVOLVE_INSPECT_FIELDS(Status)
KEVOLVE_INSPECT_FIELDS(Proposal)
KEVOLVE_INSPECT_FIELDS(NodeRecord)
KEVOLVE_INSPECT_FIELDS(SearchRecord)
KEVOLVE_INSPECT_FIELDS(Candidate)
KEVOLVE_INSPECT_FIELDS(BuildResult)
KEVOLVE_INSPECT_FIELDS(Timing)
KEVOLVE_INSPECT_FIELDS(DetectorSet)
KEVOLVE_INSPECT_FIELDS(EvalResult)
KEVOLVE_INSPECT_FIELDS(EvalOptions)
KEVOLVE_INSPECT_FIELDS(Artifact)
KEVOLVE_INSPECT_FIELDS(NodeEntry)
KEVOLVE_INSPECT_FIELDS(ArtifactEntry)
KEVOLVE_INSPECT_FIELDS(StoreBatch)
KEVOLVE_INSPECT_FIELDS(MakeRequest)
KEVOLVE_INSPECT_FIELDS(NodeContext)
KEVOLVE_INSPECT_FIELDS(EvaluatingDevice)
KEVOLVE_INSPECT_FIELDS(MakeReply)
KEVOLVE_INSPECT_FIELDS(ActionReply)
KEVOLVE_INSPECT_FIELDS(BuildJob)
KEVOLVE_INSPECT_FIELDS(BuildOutcome)
KEVOLVE_INSPECT_FIELDS(EvalJob)
KEVOLVE_INSPECT_FIELDS(DeviceInfo)
KEVOLVE_INSPECT_FIELDS(KbQuery)
KEVOLVE_INSPECT_FIELDS(KbHit)
KEVOLVE_INSPECT_FIELDS(ScoredNote)
KEVOLVE_INSPECT_FIELDS(SearchStatus)

}  // namespace kevolve

CAF_BEGIN_TYPE_ID_BLOCK(kevolve, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(kevolve, (kevolve::Status))
CAF_ADD_TYPE_ID(kevolve, (kevolve::Proposal))
CAF_ADD_TYPE_ID(kevolve, (kevolve::NodeRecord))
CAF_ADD_TYPE_ID(kevolve, (kevolve::SearchRecord))
CAF_ADD_TYPE_ID(kevolve, (kevolve::Candidate))
CAF_ADD_TYPE_ID(kevolve, (kevolve::EvalResult))
CAF_ADD_TYPE_ID(kevolve, (kevolve::EvalOptions))
CAF_ADD_TYPE_ID(kevolve, (kevolve::StoreBatch))
CAF_ADD_TYPE_ID(kevolve, (kevolve::MakeRequest))
CAF_ADD_TYPE_ID(kevolve, (kevolve::MakeReply))
CAF_ADD_TYPE_ID(kevolve, (kevolve::BuildJob))
CAF_ADD_TYPE_ID(kevolve, (kevolve::BuildOutcome))
CAF_ADD_TYPE_ID(kevolve, (kevolve::EvalJob))
CAF_ADD_TYPE_ID(kevolve, (kevolve::SearchStatus))
CAF_ADD_TYPE_ID(kevolve, (kevolve::ScoredNote))
CAF_ADD_TYPE_ID(kevolve, (kevolve::KbQuery))
CAF_ADD_TYPE_ID(kevolve, (kevolve::KbHit))
CAF_ADD_TYPE_ID(kevolve, (kevolve::NodeState))
CAF_ADD_TYPE_ID(kevolve, (kevolve::DeviceInfo))
CAF_ADD_TYPE_ID(kevolve, (std::vector<std::string>))
CAF_ADD_TYPE_ID(kevolve, (kevolve::ActionReply))
CAF_ADD_ATOM(kevolve, kevolve::atoms, start_atom, "start")
CAF_ADD_ATOM(kevolve, kevolve::atoms, make_atom, "make")
CAF_ADD_ATOM(kevolve, kevolve::atoms, build_atom, "build")
CAF_ADD_ATOM(kevolve, kevolve::atoms, eval_atom, "eval")
CAF_ADD_ATOM(kevolve, kevolve::atoms, write_atom, "write")
CAF_ADD_ATOM(kevolve, kevolve::atoms, commit_atom, "commit")
CAF_ADD_ATOM(kevolve, kevolve::atoms, state_atom, "state")
CAF_ADD_ATOM(kevolve, kevolve::atoms, scored_atom, "scored")
CAF_ADD_ATOM(kevolve, kevolve::atoms, status_atom, "status")
CAF_ADD_ATOM(kevolve, kevolve::atoms, ckpt_atom, "ckpt")
CAF_ADD_ATOM(kevolve, kevolve::atoms, flush_atom, "flush")
CAF_ADD_ATOM(kevolve, kevolve::atoms, tick_atom, "tick")
CAF_ADD_ATOM(kevolve, kevolve::atoms, spec_atom, "spec")
CAF_ADD_ATOM(kevolve, kevolve::atoms, kb_atom, "kb")
CAF_ADD_ATOM(kevolve, kevolve::atoms, register_atom, "register")
CAF_ADD_ATOM(kevolve, kevolve::atoms, console_atom, "console")
CAF_ADD_ATOM(kevolve, kevolve::atoms, frame_atom, "frame")
CAF_ADD_ATOM(kevolve, kevolve::atoms, closed_atom, "closed")
CAF_ADD_ATOM(kevolve, kevolve::atoms, result_atom, "result")
CAF_ADD_ATOM(kevolve, kevolve::atoms, control_atom, "control")
CAF_ADD_ATOM(kevolve, kevolve::atoms, submit_atom, "submit")
CAF_ADD_ATOM(kevolve, kevolve::atoms, progress_atom, "progress")
CAF_ADD_ATOM(kevolve, kevolve::atoms, watch_atom, "watch")
CAF_ADD_ATOM(kevolve, kevolve::atoms, engine_atom, "engine")
CAF_END_TYPE_ID_BLOCK(kevolve)
