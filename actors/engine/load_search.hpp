// Reading a search out of the store before its actors start: the record (new or resumed), its nodes,
// the sources of nodes that were never scored, contexts for operators that want them, and the lessons
// earlier searches left (the operator is warm-started from them when the search is new).
#pragma once
#include "actors/search/search_actor.hpp"
#include "runtime/core/expected.hpp"
#include "runtime/memory/lessons.hpp"
#include "storage/store.hpp"

namespace kevolve {

struct LoadedSearch {
  SearchSetup setup;
  Lessons lessons;
};

// A search that is not in the store starts afresh. One whose record or nodes cannot be read is refused
// with Errc::corrupt (or io), never started over: that would overwrite what is there.
Expected<LoadedSearch> load_search(Store& store, const RunConfig& config, const ProblemSpec& spec, Operator& op);

// The status of a search the store holds as finished.
SearchStatus stored_status(const SearchSetup& setup);

}  // namespace kevolve
