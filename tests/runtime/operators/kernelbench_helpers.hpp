// Helpers for tests of the KernelBench operator: the seed, scored correct, and the child proposed after it.
#pragma once
#include <catch2/catch.hpp>

#include <utility>

#include "runtime/operators/kernelbench_operator.hpp"

namespace kevolve::test {

// The operator's seed (the module as written) and its first child: for a problem of a template family,
// the family's kernel with the template's default parameters.
inline std::pair<Offspring, Offspring> seed_and_child(KernelBenchOperator& op) {
  SearchGraph g;
  Rng rng(7);
  auto seed = op.make({Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  NodeRecord n;
  n.id = 1;
  n.params = seed->params;
  n.state = NodeState::scored;
  n.status = EvalStatus::ok;
  n.fitness = 1;
  g.upsert(n);
  auto child = op.make({Operation::mutate, {1}, 0}, g, rng);
  REQUIRE(child);
  return {*seed, *child};
}

}  // namespace kevolve::test
