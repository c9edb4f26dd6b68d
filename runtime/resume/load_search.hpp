// Reading a search out of the store before its actors start: the record (new or resumed), its nodes,
// the sources of nodes that were never scored, contexts for operators that want them, and the lessons
// earlier searches left (the operator is warm-started from them when the search is new).
#pragma once
#include <memory>

#include "runtime/core/expected.hpp"
#include "runtime/memory/lessons.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/search_status.hpp"
#include "runtime/resume/search_plan.hpp"
#include "runtime/search/graph.hpp"  // NodeCounts
#include "storage/store.hpp"

namespace kevolve {

struct LoadedSearch {
  SearchPlan plan;
  Lessons lessons;
  NodeCounts counts;  // of the stored nodes (resume)
  double best_fitness = 0;
  uint64_t best_node = 0;
};

// A search that is not in the store starts afresh. One whose record or nodes cannot be read is refused
// with Errc::corrupt (or io), never started over: that would overwrite what is there.
// The nodes are read one at a time, never all held: plan.stored_nodes reads them again for the search actor.
Expected<LoadedSearch> load_search(const std::shared_ptr<Store>& store, const RunConfig& config,
                                   const ProblemSpec& spec, Operator& op);

// The status of a search the store holds as finished.
SearchStatus stored_status(const LoadedSearch& l);

}  // namespace kevolve
