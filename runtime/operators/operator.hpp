// Operator: turns a strategy's proposal (an operation on parent nodes) into a new candidate kernel.
// Implementations: TemplateOperator (offline, knowledge-base templates); the LLM operator slots in here.
#pragma once
#include <string>

#include "runtime/expected.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/search/strategy.hpp"

namespace kevolve {

struct Offspring {
  Params params;        // what distinguishes this child (template parameters, or a content hash)
  Candidate candidate;  // real source code for the backend
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual std::string name() const = 0;
  // Builds the child of `p` (parents are nodes of `g`). An error means no new child could be made
  // (e.g. every neighbour already exists); the search then moves on.
  virtual Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng) = 0;
  // Whether failed nodes can be given to this operator for repair.
  virtual bool can_repair() const = 0;
};

}  // namespace kevolve
