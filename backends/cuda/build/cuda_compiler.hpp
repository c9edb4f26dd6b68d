// Builds a CUDA candidate in a private folder, for one real architecture (never PTX-only):
//   kernel-only (has `// @kevolve` launch lines) -> NVRTC, through the kevolve-nvrtc child process -> .cubin
//                                                   with the launch description beside it (.cubin.launch)
//   host code (exports kevolve_kernel)            -> nvcc -shared -cudart static -> .so
// The log carries the compiler's resource report (registers, shared memory, spills) and, where cuobjdump
// is installed, the SASS instruction mix (load/store widths, local memory).
#pragma once
#include <string>

#include "runtime/records/candidate.hpp"

namespace kevolve::cuda {

BuildResult compile_cuda(const Candidate& c, const std::string& dir, const std::string& arch, double timeout_s = 120);

// A short summary of a kernel image's SASS (cuobjdump -sass): instruction count, global loads and stores
// by width, local-memory accesses, shuffles, barriers. Says "unavailable (...)" without cuobjdump.
std::string sass_profile(const std::string& artifact);

}  // namespace kevolve::cuda
