// NullOperator: makes a new, unique, trivial child for every proposal (parameter n = a counter drawn
// from the proposal's randomness). Used with the null backend to measure the engine alone.
#pragma once
#include "runtime/operators/operator.hpp"

namespace kevolve {

class NullOperator : public Operator {
 public:
  std::string name() const override { return "null"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph&, Rng& rng, const OperatorContext&) override {
    Offspring o;
    o.params["n"] = std::to_string(rng());
    o.params["op"] = operation_name(p.op);
    o.candidate.source = "// null candidate " + o.params["n"] + "\n";
    o.candidate.provenance = "null operator";
    return o;
  }
  bool can_repair() const override { return false; }
  size_t history_window() const override { return 4096; }  // reads its parents and has_params() only
};

}  // namespace kevolve
