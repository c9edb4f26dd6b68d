// The node runner's interface: one per search. The search hands it each committed batch of new nodes in one
// message; it drives every node's lifecycle (build, evaluate) and reports each verdict to the search once.
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

// What every node of one search is evaluated with: the runner holds it once, not a copy per node.
struct NodeRun {
  std::string search, problem, backend;
  EvalOptions options;
  std::string device_class;  // [search] device_class: only devices whose class contains this evaluate it ("" = any)
};

// One candidate to evaluate: its node (already durable in the store) and its source.
struct NodeTask {
  NodeRecord node;
  Candidate candidate;
};
template <class F>
typename F::result_type inspect(F& f, NodeTask& x) {
  return f(caf::meta::type_name("NodeTask"), x.node, x.candidate);
}

using node_actor = caf::typed_actor<caf::reacts_to<atoms::start_atom, std::vector<NodeTask>>>;

}  // namespace kevolve
