// The project-wide CAF type-ID block: every message type and atom of kevolve, with its `inspect`.
// Registered once in the actor-system config (actors/engine/engine.cpp); a type missing here fails
// at run time when it crosses a network, so every message struct must be listed.
#pragma once
#include <caf/all.hpp>

#include "actors/protocol/messages.hpp"
#include "runtime/records/fields.hpp"

namespace kevolve {

template <class F>
typename F::result_type inspect(F& f, Status& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("Status"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, Proposal& x) {
  return f(caf::meta::type_name("Proposal"), x.op, x.parents, x.island);
}
template <class F>
typename F::result_type inspect(F& f, NodeRecord& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("NodeRecord"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, SearchRecord& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("SearchRecord"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, Candidate& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("Candidate"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, BuildResult& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("BuildResult"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, Timing& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("Timing"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, DetectorSet& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("DetectorSet"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, EvalResult& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("EvalResult"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, EvalOptions& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("EvalOptions"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, Artifact& x) {
  return f(caf::meta::type_name("Artifact"), x.node, x.kind, x.text);
}
template <class F>
typename F::result_type inspect(F& f, NodeEntry& x) {
  return f(caf::meta::type_name("NodeEntry"), x.search, x.node, x.params_stored);
}
template <class F>
typename F::result_type inspect(F& f, ArtifactEntry& x) {
  return f(caf::meta::type_name("ArtifactEntry"), x.search, x.artifact);
}
template <class F>
typename F::result_type inspect(F& f, StoreBatch& x) {
  return f(caf::meta::type_name("StoreBatch"), x.searches, x.nodes, x.artifacts);
}
template <class F>
typename F::result_type inspect(F& f, MakeRequest& x) {
  return f(caf::meta::type_name("MakeRequest"), x.search, x.proposal, x.parents, x.known, x.seed, x.parent_contexts,
           x.best, x.device);
}
template <class F>
typename F::result_type inspect(F& f, NodeContext& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("NodeContext"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, EvaluatingDevice& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("EvaluatingDevice"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, MakeReply& x) {
  return f(caf::meta::type_name("MakeReply"), x.status, x.params, x.candidate, x.prompt, x.reply, x.stop);
}
template <class F>
typename F::result_type inspect(F& f, ActionReply& x) {
  return f(caf::meta::type_name("ActionReply"), x.status, x.said);
}
template <class F>
typename F::result_type inspect(F& f, BuildJob& x) {
  return f(caf::meta::type_name("BuildJob"), x.backend, x.candidate, x.options);
}
template <class F>
typename F::result_type inspect(F& f, BuildOutcome& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("BuildOutcome"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, EvalJob& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("EvalJob"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, DeviceInfo& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("DeviceInfo"), m...); });
}
template <class F>
typename F::result_type inspect(F& f, KbQuery& x) {
  return f(caf::meta::type_name("KbQuery"), x.text, x.hardware, x.problem, x.limit);
}
template <class F>
typename F::result_type inspect(F& f, KbHit& x) {
  return f(caf::meta::type_name("KbHit"), x.path, x.title, x.score, x.snippet);
}
template <class F>
typename F::result_type inspect(F& f, ScoredNote& x) {
  return f(caf::meta::type_name("ScoredNote"), x.search, x.node, x.report, x.peak_gbps);
}
template <class F>
typename F::result_type inspect(F& f, SearchStatus& x) {  // fields: runtime/records/fields.hpp
  return fields(x, [&](auto&... m) { return f(caf::meta::type_name("SearchStatus"), m...); });
}

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
