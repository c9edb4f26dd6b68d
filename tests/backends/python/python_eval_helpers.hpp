// The Python interpreter's tests: one evaluator (CPU) shared by the tests of a binary, quick options, and the
// skip when no python3 with torch is installed.
#pragma once
#include <string>

#include "backends/python/python_backend.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"
#include "tests/test_support/skip.hpp"

namespace kevolve::test {

inline const std::string kRelu = "problems/kernelbench-small/1_relu.py";
inline const std::string kSoftmax = "problems/kernelbench-small/4_softmax.py";

inline EvalOptions quick_py() {
  EvalOptions o = quick_options();
  o.threads = 2;
  o.call_timeout_s = 5;
  return o;
}

inline EvalResult eval_py(const std::string& problem, const std::string& candidate, const EvalOptions& o = quick_py()) {
  static python::PythonBackend backend("cpu");
  Candidate c;
  c.language = "python";
  c.source = read_file(source_path(candidate));
  return backend.evaluate_source(python::kernelbench_problem(source_path(problem)), c, o);
}

inline bool no_torch_python() {
  if (!python::torch_python().empty()) return false;
  say_skipped("no python3 with torch here (the Python interpreter tests)");
  return true;
}

}  // namespace kevolve::test
