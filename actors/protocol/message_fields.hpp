// The one field list of each message struct of actors/protocol/messages.hpp (and of Proposal, which the
// strategies make in runtime/search/): fields(message, f) calls f with every field in order, as
// runtime/records/fields.hpp does for the records. CAF's inspect of each (actors/protocol/type_ids.hpp) is
// written from these lists, so a new field is added here, once.
#pragma once
#include "actors/protocol/messages.hpp"
#include "runtime/records/fields.hpp"

namespace kevolve {

template <RecordOf<Proposal> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.op, x.parents, x.island);
}

template <RecordOf<ActionReply> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.status, x.said);
}

template <RecordOf<MakeRequest> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.proposal, x.parents, x.known, x.seed, x.parent_contexts, x.best, x.device);
}

template <RecordOf<MakeReply> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.status, x.params, x.candidate, x.prompt, x.reply, x.stop);
}

template <RecordOf<ScoredNote> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.node, x.report, x.peak_gbps);
}

template <RecordOf<BuildJob> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.backend, x.candidate, x.options);
}

}  // namespace kevolve
