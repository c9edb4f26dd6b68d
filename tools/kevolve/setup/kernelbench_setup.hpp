// The offline operator of a KernelBench-format problem, for `kevolve run` and `kevolve suite --budget`:
// framework rewrites of the problem's own module, plus, where the problem's traced graph belongs to a kernel
// family (backends/python/kevolve_py_families.py), the kernels its generator writes at points of the family's
// search space, plus, where the problem computes one operator of a family with a core kernel template (found by
// backends/python/kevolve_py_match.py), that template's kernels for the device wrapped as ModelNew
// (runtime/operators/kernelbench_operator.hpp).
#pragma once
#include <memory>
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/operators/kernelbench_operator.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::cli {

struct KernelBenchSetup {
  std::shared_ptr<KernelBenchOperator> op;
  FamilyMatch match;        // the template family: "" when none fits, or when kernels were not asked for
  FamilyAnalysis families;  // the generated kernels' family: "" when none fits (reason says why), or not asked
  std::string family_note;  // one line: "family X (reason)" or "no family: reason" ("" when not asked)
  std::string note;         // for stderr: family_note, the template family, or why kernels are not proposed
};

// `problem`: a KernelBench-format spec (python::kernelbench_problem). `device`: cpu | cuda, the language of the
// kernels. `hardware`: a resolved target (knowledge/hardware/<target>) whose numbers constrain the kernel
// template. `kernels` = false: framework rewrites only. `directed`: kernel mutations follow each parent's
// diagnosis. An error names the file and what was expected.
Expected<KernelBenchSetup> kernelbench_operator(const ProblemSpec& problem, const std::string& device,
                                                const std::string& hardware, bool kernels, bool directed);

}  // namespace kevolve::cli
