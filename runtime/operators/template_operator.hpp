// TemplateOperator: the offline operator. Seed = the template's default parameters (its naive kernel);
// mutate = move one or two parameters one step (sometimes a random jump) within the constraints;
// crossover = take each parameter from either parent; migrate = mutate an immigrant from another island.
// Never proposes a parameter set the graph already holds.
#pragma once
#include "knowledge/template_library.hpp"
#include "runtime/operators/operator.hpp"

namespace kevolve {

class TemplateOperator : public Operator {
 public:
  explicit TemplateOperator(KernelTemplate t) : t_(std::move(t)) {}
  std::string name() const override { return "template"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext&) override;
  bool can_repair() const override { return false; }
  const KernelTemplate& kernel_template() const { return t_; }

  // Pure helpers, exposed for tests.
  Params mutate(const Params& parent, Rng& rng) const;
  Params crossover(const Params& a, const Params& b, Rng& rng) const;

 private:
  Expected<Offspring> finish(const Params& params, const std::string& how) const;
  KernelTemplate t_;
};

}  // namespace kevolve
