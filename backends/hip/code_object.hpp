// Static feedback on an AMDGPU code object, without a GPU: its kernels' resource use from the
// NT_AMDGPU_METADATA note (msgpack, code object v3+), the waves per SIMD a launch configuration gets on
// its target, and the refusal of a kernel that spills or asks for more LDS than a workgroup may have.
// Pure C++ (no ROCm): the HIP build step and the evaluator use it, the tests feed it real code objects.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/gpu_resources.hpp"

namespace kevolve::hip {

// The limits of one target that bound occupancy (tables after LLVM's AMDGPUBaseInfo and AMD's ISA guides).
struct TargetLimits {
  std::string arch;  // gfx908, gfx90a, gfx942, gfx1030, ...
  int wave_size = 64;
  int simds_per_cu = 4;  // per CU (gfx9) or per WGP (gfx10+, the default WGP mode)
  int max_waves_per_simd = 8;
  int vgprs_per_simd = 512;  // registers per lane in one SIMD's file (gfx908: arch VGPRs; AGPRs apart)
  int vgpr_granule = 8;
  int sgprs_per_simd = 800;  // 0: SGPRs do not bound occupancy (gfx10+)
  int sgpr_granule = 16;
  int64_t lds_per_cu = 65536;  // shared by the workgroups resident on a CU (WGP)
  int64_t lds_per_workgroup = 65536;
  int max_barriers_per_cu = 16;  // workgroups of more than one wave resident at once
};

// The limits of `arch` ("gfx90a", "gfx90a:xnack-" too); an error for a target not in the table.
Expected<TargetLimits> target_limits(std::string_view arch);

// The kernels described by a code object: an AMDGPU ELF, or a clang offload bundle holding one (the
// first amdgcn entry is read). Errors name what was malformed.
Expected<std::vector<GpuResources>> read_code_object(std::string_view bytes);

// Fills r's launch fields (block_threads, dynamic_lds_bytes, waves_per_simd, occupancy_limit) for a
// workgroup of `block_threads` threads with `dynamic_lds` bytes of dynamic LDS on target `t`. A launch
// that cannot be resident at all gets 0 waves and its limit named.
void apply_launch(GpuResources& r, const TargetLimits& t, int block_threads, int64_t dynamic_lds);

// Why the kernel must not run ("" when it may): spills or a dynamic stack (scratch traffic), more LDS
// than a workgroup may have, a block above the compiler's bound, or no resident wave at all.
std::string refusal(const GpuResources& r, const TargetLimits& t);

}  // namespace kevolve::hip
