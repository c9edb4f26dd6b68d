// kevolve export: a found kernel as something a user drops into a model, generated from the problem spec
// and the kernel source (pure C++: it writes files, it builds nothing).
//   torch-extension : a pip-installable PyTorch C++/CUDA extension (setup.py + CMakeLists.txt + binding)
//                     exposing forward(inputs..., params...) -> outputs
//   cuda-source     : the kernel with a plain C launcher and a header (a .cu for CUDA kernels, a .cpp for
//                     CPU ones), for a build of the user's own
//   kernelbench     : a KernelBench ModelNew file that compiles the kernel with load_inline
// Output shapes come from the spec's shape expressions, bound from the input tensors at call time; an
// output whose size depends on the data is not exportable (the error says which).
#pragma once
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct ExportRequest {
  ProblemSpec spec;
  std::string source;   // the kernel (CPU: exports kevolve_kernel; CUDA: kernel-only with @kevolve lines, or host code)
  std::string backend;  // cpu | cuda
  std::string format;   // torch-extension | cuda-source | kernelbench
  std::string out_dir;  // created; must not exist or be empty
  std::string kernel_header;  // the text of kevolve_kernel.h
  std::string provenance;     // one line for the generated files (search, node, measured speedup)
};

// Writes the files; returns their paths (relative to out_dir) or an error naming what cannot be exported.
Expected<std::vector<std::string>> export_kernel(const ExportRequest& r);

}  // namespace kevolve
