// The Python backend: KernelBench-format problems (a Python file with Model, get_inputs,
// get_init_inputs) and candidates (a Python file with ModelNew). The trusted evaluator is
// backends/python/kevolve_py_eval.py, run with the python3 that has torch; the candidate runs in its
// runner process (kevolve_py_runner.py). The build step only stores the source: the evaluator's static
// check refuses the hacks Python makes easy before anything runs.
#pragma once
#include <memory>

#include "backends/backend.hpp"
#include "runtime/core/expected.hpp"
#include "runtime/records/family_match.hpp"
#include "runtime/records/node.hpp"

namespace kevolve::python {

BuiltCandidate build(const Candidate& c, const EvalOptions& o);

// The python3 that imports torch: $KEVOLVE_PYTHON, else Debian's /usr/bin/python3, else python3 on PATH
// (another python3 may come first on PATH). "" when none has torch.
std::string torch_python();

// A ProblemSpec standing for a KernelBench-format file (name = file stem; inputs live in the file).
ProblemSpec kernelbench_problem(const std::string& path);

// Which kernel-template family the problem's Model computes, and how its kernel is fed from the module
// (backends/python/kevolve_py_match.py, run with the torch python). family is "" when none fits; an error
// when the matcher could not run or the problem file could not be loaded (the message names the file).
// device "cuda": the probes are made and run on the GPU (the CPU when none is usable or memory is short).
Expected<FamilyMatch> match_family(const std::string& problem_file, const std::string& device = "cpu");

// The kernel family of the problem's traced graph and the generator's search spaces
// (backends/python/kevolve_py_families_cli.py --problem FILE). family is "" when none fits, with the reason. The
// answer is kept per problem file (its path, size and modification time) for the life of the process. An error
// when the script could not run or gave no readable answer (the message names the file).
Expected<FamilyAnalysis> analyse_families(const std::string& problem_file);

// A complete ModelNew file running the kernel generated for the problem's family on `backend` (cpu | cuda) at
// `params` (a point of the family's space; missing parameters take their defaults): kevolve_py_families_cli.py
// --backend B --params JSON. `space` tells which parameters are strings. An error carries the generator's.
struct GeneratedKernel {
  std::string source;
  Params params;  // the parameters the generator used
};
Expected<GeneratedKernel> generate_family_kernel(const std::string& problem_file, const std::string& backend,
                                                 const Params& params, const FamilySpace& space);

// The problem file's text with `Model` renamed `_KevolveBase`: candidates that build on the module itself
// (framework rewrites, wrapped kernels) without naming the reference.
Expected<std::string> renamed_problem_source(const std::string& problem_file);

// backends/python/kevolve_kernel_glue.py, which generated ModelNew files inline to run kevolve kernels.
Expected<std::string> kernel_glue_source();

class EvalServer;

class PythonBackend : public Backend {
 public:
  // `device`: cpu or cuda (where the model, inputs and timing run). Evaluations go to one persistent
  // evaluator process (EvalServer), started on first use.
  explicit PythonBackend(std::string device = "cpu");
  // On the GPU: evaluate on this process's CUDA device `index` (its evaluator sees only that GPU).
  void use_gpu(int index);
  ~PythonBackend() override;
  EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) override;
  const char* name() const override { return "python"; }
  // Evaluates `spec`'s own Model as the candidate: the correct baseline, labelled "reference".
  EvalResult evaluate_reference(const ProblemSpec& spec, const EvalOptions& o);

 private:
  EvalResult run(const ProblemSpec& spec, const std::string& candidate, const EvalOptions& o, bool reference);
  std::string device_;
  std::unique_ptr<EvalServer> server_;
};

}  // namespace kevolve::python
