// GpuResources: what a GPU kernel's code object says about its resource use, read without a GPU (the
// HIP build step fills it from the AMDGPU metadata note), and the occupancy that follows for its launch.
// A plain record: the build log and the verdict's profile carry its text (`describe`).
#pragma once
#include <cstdint>
#include <string>

namespace kevolve {

struct GpuResources {
  std::string kernel;         // symbol name
  std::string target;         // "amdgcn-amd-amdhsa--gfx90a"
  int wave_size = 0;          // 64 (CDNA, gfx9) or 32 (RDNA wave32)
  int vgprs = 0;              // vector registers per lane (on gfx90a/gfx94x: the unified file, AGPRs included)
  int agprs = 0;              // accumulation registers per lane
  int sgprs = 0;              // scalar registers per wave (VCC, flat scratch, XNACK included)
  int64_t lds_bytes = 0;      // static LDS (group segment) per workgroup
  int64_t scratch_bytes = 0;  // private segment per lane (spills, stack arrays)
  int vgpr_spills = 0, sgpr_spills = 0;
  bool dynamic_stack = false;  // scratch of unknown size (recursion, alloca)
  int max_workgroup_size = 0;  // the compiler's bound (launch bounds)
  // Filled for one launch configuration (0 when unknown):
  int block_threads = 0;          // threads per workgroup
  int64_t dynamic_lds_bytes = 0;  // LDS asked for at launch on top of the static part
  int waves_per_simd = 0;         // resident waves per SIMD
  std::string occupancy_limit;    // what bounds them: "vgprs", "sgprs", "lds", "workgroups", "waves"
};

inline std::string describe(const GpuResources& r) {
  std::string s = r.kernel + " (" + r.target + ", wave" + std::to_string(r.wave_size) + "): VGPR " +
                  std::to_string(r.vgprs) + ", AGPR " + std::to_string(r.agprs) + ", SGPR " + std::to_string(r.sgprs) +
                  ", LDS " + std::to_string(r.lds_bytes) + " B static, scratch " + std::to_string(r.scratch_bytes) +
                  " B/lane, spills VGPR " + std::to_string(r.vgpr_spills) + " SGPR " + std::to_string(r.sgpr_spills);
  if (r.dynamic_stack) s += ", dynamic stack";
  if (r.block_threads > 0)
    s += "; block " + std::to_string(r.block_threads) +
         (r.dynamic_lds_bytes ? " + " + std::to_string(r.dynamic_lds_bytes) + " B dynamic LDS" : std::string()) + ": " +
         std::to_string(r.waves_per_simd) + " waves/SIMD (limited by " + r.occupancy_limit + ")";
  return s;
}

}  // namespace kevolve
