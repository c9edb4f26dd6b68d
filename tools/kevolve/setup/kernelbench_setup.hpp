// The offline operator of a KernelBench-format problem, for `kevolve run` and `kevolve suite --budget`:
// framework rewrites of the problem's own module, plus, where the problem computes one operator of a family
// with a core kernel template (found by backends/python/kevolve_py_match.py), that template's kernels for
// the device wrapped as ModelNew (runtime/operators/kernelbench_operator.hpp).
#pragma once
#include <memory>
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/operators/kernelbench_operator.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::cli {

struct KernelBenchSetup {
  std::shared_ptr<KernelBenchOperator> op;
  FamilyMatch match;  // family "" when none fits, or when kernels were not asked for
  std::string note;   // one line for stderr: the family and its template, or why kernels are not proposed
};

// `problem`: a KernelBench-format spec (python::kernelbench_problem). `device`: cpu | cuda, the language of the
// kernels. `hardware`: a resolved target (knowledge/hardware/<target>) whose numbers constrain the kernel
// template. `kernels` = false: framework rewrites only. `directed`: kernel mutations follow each parent's
// diagnosis. An error names the file and what was expected.
Expected<KernelBenchSetup> kernelbench_operator(const ProblemSpec& problem, const std::string& device,
                                                const std::string& hardware, bool kernels, bool directed);

}  // namespace kevolve::cli
