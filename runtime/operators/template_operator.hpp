// TemplateOperator: the offline operator. Seed = the template's default parameters (its naive kernel);
// mutate = move one or two parameters one step (sometimes a random jump) within the constraints;
// crossover = take each parameter from either parent; migrate = mutate an immigrant from another island.
// Never proposes a parameter set the graph already holds.
// Directed mode (follow_directives): a mutation follows the parent's diagnosis instead of picking a
// parameter blindly — memory-bound: raise a parallelism, width or caching parameter (threads, vec,
// unroll, chunk, block, group, cache), or now and then change an algorithm choice; compute-bound: mostly
// change an algorithm choice (a string parameter), else raise a width. Where a constraint ties two
// numeric parameters together ("threads * bps <= 2048"), a memory-bound mutation sometimes trades between
// them instead: one a step up, the other a step down, about the same product (the threads resident per SM)
// in another shape, a point no one-parameter move reaches from a parent at the bound. One in four mutations
// stays blind, to keep exploring. The diagnosis uses the node's timing and the problem's
// roofline only, never the answer.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "knowledge/template_library.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

class TemplateOperator : public Operator {
 public:
  explicit TemplateOperator(KernelTemplate t);
  std::string name() const override { return "template"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext&) override;
  bool can_repair() const override { return false; }
  size_t history_window() const override { return 4096; }  // reads its parents and has_params() only
  // The seed becomes the best earlier kernel whose parameters are valid points of this template.
  std::string warm_start(const Lessons& l) override;
  const KernelTemplate& kernel_template() const { return t_; }

  // Pure helpers, exposed for tests.
  Params mutate(const Params& parent, Rng& rng) const;
  Params crossover(const Params& a, const Params& b, Rng& rng) const;
  Params directed_mutate(const Params& parent, const std::string& diagnosis_summary, Rng& rng) const;
  // One coupled pair (two numeric parameters named by one constraint) moved a step in opposite directions;
  // the parent itself when the template has no such pair or none can move.
  Params trade(const Params& parent, Rng& rng) const;
  // The coupled pairs, as indices into kernel_template().params.
  const std::vector<std::pair<size_t, size_t>>& coupled() const { return coupled_; }

  // Turns directed mode on; the spec gives the roofline figures the diagnosis needs.
  void follow_directives(const ProblemSpec& spec) {
    spec_ = spec;
    directed_ = true;
  }

 private:
  Expected<Offspring> finish(const Params& params, const std::string& how) const;
  KernelTemplate t_;
  std::vector<std::pair<size_t, size_t>> coupled_;
  bool directed_ = false;
  std::optional<Exemplar> warm_;
  ProblemSpec spec_;
};

}  // namespace kevolve
