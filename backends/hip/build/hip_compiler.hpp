// Builds a kernel-only HIP candidate (`// @kevolve` launch lines, kv_cuda_args by value) in a private folder
// with hipcc into an AMDGPU code object for one target (`--genco --offload-arch=gfxNNN`, an ELF, not a
// bundle), and reads its resource use from the code object's metadata (backends/hip/code_object). No GPU
// is needed. kevolve_kernel.h and kevolve_gpu_portable.h are written beside the source.
#pragma once
#include <string>

#include "runtime/core/expected.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/gpu_resources.hpp"

namespace kevolve::hip {

struct HipBuild {
  BuildResult build;               // artifact: dir/candidate.hsaco, with candidate.hsaco.launch beside it
  bool toolchain_missing = false;  // hipcc is not installed here
  GpuResources resources;          // of the launched kernel, with its launch applied where the block is a constant
  std::string refusal;             // why it must not run ("" when it may): spills, LDS (code_object.hpp)
};

// hipcc: $KEVOLVE_HIPCC, else hipcc on PATH ("" when there is none).
std::string hipcc_path();

HipBuild compile_hip(const std::string& source, const std::string& dir, const std::string& arch,
                     double timeout_s = 120);

// The candidate's device code after the preprocessor (`hipcc --cuda-device-only -E`, confined, the build's
// target and flags) into `text`, for the scan of the expanded source; ok when it ran (else its log says
// why). Writes the same files as compile_hip.
BuildResult preprocess_hip(const std::string& source, const std::string& dir, const std::string& arch,
                           std::string& text, double timeout_s = 120);

// Reads a code object file and picks `kernel` (the first when empty); errors name the file.
Expected<GpuResources> read_resources(const std::string& code_object_path, const std::string& kernel);

}  // namespace kevolve::hip
