// Test helper: the record of a new child, as the search actor makes it from a proposal and the operator's
// parameters (unscored, in flight).
#pragma once
#include "runtime/search/strategy.hpp"

namespace kevolve::test {

inline NodeRecord child_record(uint64_t id, const Proposal& p, const Params& params) {
  NodeRecord n;
  n.id = id;
  n.parents = p.parents;
  n.op = p.op;
  n.island = p.island;
  n.params = params;
  return n;
}

}  // namespace kevolve::test
