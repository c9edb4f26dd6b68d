// The data of one search as its search actor starts from it: the config and problem, the record (new or as
// stored), how to read its stored nodes, the sources of nodes never scored, and what its operator wants kept.
// Plain data: the actor handles the search talks to are added beside it (actors/search/search_actor.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "runtime/config/run_config.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/node.hpp"
#include "runtime/records/node_context.hpp"
#include "runtime/records/problem.hpp"
#include "runtime/search/graph.hpp"     // ParamIndex
#include "runtime/search/strategy.hpp"  // StoredNodes

namespace kevolve {

struct SearchPlan {
  RunConfig config;
  ProblemSpec spec;
  SearchRecord record;                       // new, or as stored (resume)
  std::vector<NodeRecord> nodes;             // as stored (resume), where stored_nodes is not given
  StoredNodes stored_nodes;                  // resume: reads the stored nodes one at a time (load_stored)
  std::map<uint64_t, Candidate> unfinished;  // sources of stored nodes that were never scored
  bool keep_context = false;                 // the operator wants sources and reports (LLM)
  size_t operator_window = 0;                // the operator's Operator::history_window() (0 = every node)
  // The operator's concurrency() when its make() blocks (LLM calls): proposals then go one per request, up to
  // this many at once, so each child returns as soon as its reply does. 0: batched, two requests at most.
  int operator_lanes = 0;
  std::shared_ptr<ParamIndex> params;        // shared with the operator actor's graph (this process); none: its own
  std::map<uint64_t, NodeContext> contexts;  // as stored (resume), when keep_context
};

}  // namespace kevolve
