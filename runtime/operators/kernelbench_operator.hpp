// KernelBenchOperator: the offline operator for KernelBench-format (.py) problems. Up to three arms, told apart
// by the node parameter "impl":
//   framework  knowledge/templates/python/rewrite: the problem's own module run through PyTorch machinery
//              (tracing, torch.compile modes, CUDA graphs, channels-last); the evaluator labels these
//              `framework` and they are counted apart from generated kernels;
//   kernel     where the problem computes one operator of a family with a core kernel template (a
//              FamilyMatch), that template's points rendered for the backend (cpu or cuda) and wrapped as a
//              ModelNew that runs the kernel on the module's own tensors (labelled `kernel`);
//   generated  where the problem's traced graph belongs to a kernel family (a FamilyAnalysis: pointwise,
//              reduction, normalization, softmax, scan, loss, or a library op followed by one), the ModelNew the
//              family's generator writes at a point of its search space (GeneratedFamily::generate; labelled
//              `kernel` by the evaluator too). Its parameters are the node's parameters.
// Seed: the generated arm's default point when there is one, else the framework arm's default (the module as
// written). Every later proposal picks an arm: an arm with no node yet first (generated, then kernel, then
// framework), then the generated arm with odds 1/2 and the others evenly (all evenly without it). When the
// parent belongs to another arm, the child comes from the picked arm's next unused seed point (the generated
// arm: its defaults, then a few points one parameter away from them), else from its best correct node (else its
// newest node, else its default point). Within the template arms the TemplateOperator's mutation and crossover
// apply (directed, for the kernel arm, when asked); within the generated arm a mutation moves one parameter of
// the parent to another of its allowed values (a point the graph does not hold; only when every such neighbour
// is taken, an unused point elsewhere in the space), and a crossover takes each parameter from either parent.
#pragma once
#include <functional>
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

// What proposing generated family kernels needs.
struct GeneratedFamily {
  std::string family;   // pointwise, reduction, ..., conv2d+normalization
  std::string backend;  // cpu | cuda: the space and kernels are this backend's
  FamilySpace space;
  // The complete ModelNew file at a point of the space (backends/python: generate_family_kernel); an error is
  // the generator's.
  std::function<Expected<std::string>(const Params&)> generate;
};

class KernelBenchOperator : public Operator {
 public:
  static constexpr const char* kImpl = "impl";

  static constexpr size_t kGeneratedSeeds = 4;  // the defaults and up to three points one parameter away

  // `framework`: the rewrite template (its context holds problem_source). `kernel`: the family's core template
  // (with the target's hardware numbers) and how to wrap its renderings; nullopt when no family matched.
  // `generated`: the problem's kernel family and its generator; nullopt when the graph is in no family.
  KernelBenchOperator(KernelTemplate framework, std::optional<std::pair<KernelTemplate, KernelWrap>> kernel,
                      std::optional<GeneratedFamily> generated = std::nullopt);
  std::string name() const override { return "template"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) override;
  bool can_repair() const override { return false; }
  // The seed becomes the best earlier node (of either arm) whose parameters are a valid point of its arm.
  std::string warm_start(const Lessons& l) override;
  // Each generated kernel is written by a Python process (a second or two): the operator gets a thread of its own.
  bool blocks() const override { return generated_.has_value(); }
  bool has_kernels() const { return arms_.size() > 1; }  // template kernels or generated ones
  bool has_template_kernels() const { return arm_named("kernel") < arms_.size(); }
  bool has_generated() const { return generated_.has_value(); }
  // The generated arm's seed points, in order: its defaults, then up to kGeneratedSeeds - 1 points each moving
  // one parameter of the defaults to the first other value of its space. Empty without a generated arm.
  std::vector<Params> generated_seeds() const;
  // Directed mode for the kernel arm (TemplateOperator::follow_directives): a mutation follows the parent's
  // diagnosis, placed against the bytes of the problem's own shape (FamilyMatch::shape).
  void follow_directives();

 private:
  struct Arm {
    std::string name;
    std::optional<TemplateOperator> op;  // the template arms
    std::optional<KernelWrap> wrap;      // the kernel arm
  };
  size_t arm_of(const NodeRecord& n) const;
  size_t arm_named(const std::string& name) const;  // arms_.size() when there is none
  // The child of `p` within arm `a` (parents already of that arm), labelled and wrapped.
  Expected<Offspring> within(size_t a, const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx);
  // The generated arm: a seed point, a one-parameter move of the parent, or a crossover of two parents.
  Expected<Offspring> within_generated(const Proposal& p, const SearchGraph& g, Rng& rng);
  Expected<Offspring> generate(const Params& point) const;
  Params point_of(const NodeRecord& n) const;  // a node's parameters as a full point of the space
  std::optional<Params> unused_seed(const SearchGraph& g) const;
  double space_points() const;                      // how many points the generated space has
  bool generated_full(const SearchGraph& g) const;  // the graph holds as many generated nodes as there are points
  std::vector<Arm> arms_;
  size_t seed_arm_ = 0;
  std::optional<GeneratedFamily> generated_;
  std::optional<Params> warm_generated_;  // the seed point given by warm_start
};

}  // namespace kevolve
