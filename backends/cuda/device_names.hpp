// What differs between the two builds of the GPU worker (kevolve-cuda-eval/-runner, and the same sources
// built for AMD as kevolve-hip-eval/-runner with KV_ON_HIP, where <cuda.h> and <cuda_runtime_api.h> are
// backends/hip/cuda_names/: the CUDA calls the worker makes, named by their HIP equivalents). Everything
// else in backends/cuda/evaluator and backends/cuda/runner is one source for both.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kevolve::cuda {

#ifdef KV_ON_HIP
inline constexpr const char* kGpuApi = "HIP";       // in messages: "HIP error ...", "HIP IPC"
inline constexpr const char* kGpuReason = "hip";    // the verdict's reason for a device fault
inline constexpr const char* kBackendName = "hip";  // ProblemSpec::bench_for
inline constexpr const char* kEvaluatorName = "kevolve-hip-eval";
inline constexpr const char* kRunnerName = "kevolve-hip-runner";
inline constexpr const char* kTorchHint = "build the worker against a ROCm torch (tools/build_hip_worker.sh)";
// Host-code candidates (.so) would share the runner's HIP runtime (no static one as with nvcc): not offered.
inline constexpr bool kHostCodeCandidates = false;
// ROCm 5 exports device memory to another process through a KFD ioctl that only AMD's own kernel driver has.
inline constexpr const char* kIpcHint =
    " (ROCm 5 shares device memory between processes through the amdgpu-dkms kernel driver's KFD; the "
    "distribution's upstream amdgpu driver lacks it: install amdgpu-dkms, docs/hip.md)";
#else
inline constexpr const char* kGpuApi = "CUDA";
inline constexpr const char* kGpuReason = "cuda";
inline constexpr const char* kBackendName = "cuda";
inline constexpr const char* kEvaluatorName = "kevolve-cuda-eval";
inline constexpr const char* kRunnerName = "kevolve-cuda-runner";
inline constexpr const char* kTorchHint = "build the worker against a CUDA torch (tools/build_cuda_worker.sh)";
inline constexpr bool kHostCodeCandidates = true;  // .so built by nvcc with a static cudart
inline constexpr const char* kIpcHint = "";
#endif

// The message of a worker that finds no device; `why` is the runtime's error text.
inline std::string no_device(const std::string& why) {
#ifdef KV_ON_HIP
  return "no AMD GPU (the HIP runtime found none: " + why + ")";
#else
  return "no usable CUDA device: " + why;
#endif
}

// The architecture a kernel image must be built for: sm_90 on NVIDIA, the gfx name (with its feature
// flags, e.g. gfx90a:sramecc+:xnack-) on AMD.
inline std::string device_arch(const cudaDeviceProp& p) {
#ifdef KV_ON_HIP
  return p.gcnArchName;
#else
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
}

// Bytes written before each timed call so that no cache keeps the last call's data: twice the L2, at
// least 64 MiB on NVIDIA. AMD's Infinity Cache (MALL, up to 256 MB on MI300X) sits behind the L2 and is not
// reported by the runtime, so on AMD at least 512 MiB.
inline int64_t flush_bytes_for(int64_t l2_bytes) {
#ifdef KV_ON_HIP
  return std::max<int64_t>(2 * l2_bytes, int64_t{512} << 20);
#else
  return std::max<int64_t>(2 * l2_bytes, int64_t{64} << 20);
#endif
}

// A kernel image the runner loads and launches itself (no candidate host code): .cubin, or .hsaco on AMD.
inline bool is_kernel_image(const std::string& artifact) {
  auto ends = [&](const char* s) {
    const std::string e(s);
    return artifact.size() > e.size() && artifact.compare(artifact.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".cubin") || ends(".hsaco");
}

}  // namespace kevolve::cuda
