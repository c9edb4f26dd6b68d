// KernelBenchOperator: the offline operator for KernelBench-format (.py) problems. Two arms, told apart by
// the node parameter "impl":
//   framework  knowledge/templates/python/rewrite: the problem's own module run through PyTorch machinery
//              (tracing, torch.compile modes, CUDA graphs, channels-last); the evaluator labels these
//              `framework` and they are counted apart from generated kernels;
//   kernel     where the problem computes one operator of a family with a core kernel template (a
//              FamilyMatch), that template's points rendered for the backend (cpu or cuda) and wrapped as a
//              ModelNew that runs the kernel on the module's own tensors (labelled `kernel`).
// Seed: the framework arm's default (the module as written). Every later proposal picks an arm: the kernel
// arm while it has no node yet, then either with equal odds. When the parent belongs to the other arm, the
// child comes from the picked arm's best correct node (else its newest node, else its default point); within
// an arm the TemplateOperator's mutation and crossover apply (directed, for the kernel arm, when asked).
#pragma once
#include <optional>

#include "knowledge/template_library.hpp"
#include "runtime/operators/template_operator.hpp"
#include "runtime/records/family_match.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

// What wrapping a core kernel as a ModelNew needs.
struct KernelWrap {
  ProblemSpec core;  // the family's core problem: its inputs, outputs, parameters and entry point
  FamilyMatch match;
  std::string backend;         // cpu | cuda: the kernel's language (CPU C++ or kernel-only CUDA)
  std::string problem_source;  // the problem file with Model renamed _KevolveBase
  std::string glue;            // backends/python/kevolve_kernel_glue.py
  std::string header;          // backends/kevolve_kernel.h
};

// The ModelNew source that runs `kernel_source` (a rendering of the core template) on the module's tensors:
// self-contained (glue, kernel and header inlined), a subclass of the renamed problem module so that the
// constructor, parameters and state_dict are the reference's. An error when the match does not fit the core
// problem (input or parameter counts, shapes that are not plain symbols, dtypes other than float32).
Expected<std::string> wrap_kernel_as_model_new(const KernelWrap& w, const std::string& kernel_source,
                                               const std::string& note);

class KernelBenchOperator : public Operator {
 public:
  static constexpr const char* kImpl = "impl";

  // `framework`: the rewrite template (its context holds problem_source). `kernel`: the family's core template
  // (with the target's hardware numbers) and how to wrap its renderings; nullopt when no family matched.
  KernelBenchOperator(KernelTemplate framework, std::optional<std::pair<KernelTemplate, KernelWrap>> kernel);
  std::string name() const override { return "template"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) override;
  bool can_repair() const override { return false; }
  // The seed becomes the best earlier node (of either arm) whose parameters are a valid point of its arm.
  std::string warm_start(const Lessons& l) override;
  bool has_kernels() const { return arms_.size() > 1; }
  // Directed mode for the kernel arm (TemplateOperator::follow_directives): a mutation follows the parent's
  // diagnosis, placed against the bytes of the problem's own shape (FamilyMatch::shape).
  void follow_directives();

 private:
  struct Arm {
    std::string name;
    TemplateOperator op;
    std::optional<KernelWrap> wrap;
  };
  size_t arm_of(const NodeRecord& n) const;
  // The child of `p` within arm `a` (parents already of that arm), labelled and wrapped.
  Expected<Offspring> within(size_t a, const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx);
  std::vector<Arm> arms_;
  size_t seed_arm_ = 0;
};

}  // namespace kevolve
