// Builds a CUDA candidate in a private folder, for one real architecture (never PTX-only):
//   kernel-only (has `// @kevolve` launch lines) -> NVRTC, through the kevolve-nvrtc child process -> .cubin
//                                                   with the launch description beside it (.cubin.launch)
//   host code (exports kevolve_kernel)            -> nvcc -shared -cudart static -> .so
// The log carries the compiler's resource report (registers, shared memory, spills) and, where cuobjdump
// is installed, the SASS instruction mix (load/store widths, local memory). Every tool that reads the
// candidate's text or its artifact (NVRTC's helper, nvcc, cuobjdump) runs confined
// (backends/process/confined_build.hpp): the build is an untrusted step.
#pragma once
#include <string>

#include "runtime/records/candidate.hpp"

namespace kevolve::cuda {

BuildResult compile_cuda(const Candidate& c, const std::string& dir, const std::string& arch, double timeout_s = 120);

// The candidate after the preprocessor (`nvcc -E`, confined, the flags of its build) into `text`, for the
// scan of the expanded source; ok when preprocessing succeeded (else the log says why: nvcc missing, or
// the preprocessor's errors). Writes the same files as compile_cuda.
BuildResult preprocess_cuda(const Candidate& c, const std::string& dir, const std::string& arch, std::string& text,
                            double timeout_s = 120);
// Where compile_cuda writes the candidate's source in `dir`.
std::string cuda_source_path(const std::string& dir);

// A short summary of a kernel image's SASS (cuobjdump -sass): instruction count, global loads and stores
// by width, local-memory accesses, shuffles, barriers. Says "unavailable (...)" without cuobjdump.
std::string sass_profile(const std::string& artifact);

}  // namespace kevolve::cuda
