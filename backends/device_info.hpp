// What this machine's devices are, for the cluster and for fitness per device class.
//
// A device class is a build target (backends/build_target.hpp) plus the device's model ("cuda:sm_90 NVIDIA
// H200", "cpu:znver3 AMD EPYC 7B13"): measurements of one class are comparable, those of two classes are
// not (an H100 and an H200 share sm_90 but not their bandwidth). Every verdict carries the class of the
// device that gave it, and a search keeps its fitness per class. KEVOLVE_DEVICE_MODEL overrides the model
// this machine reports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kevolve {

// The name of the GPU this process sees as CUDA device `index` (the index-th entry of CUDA_VISIBLE_DEVICES,
// an index or a UUID; else the index itself): what a worker for that device gets as its CUDA_VISIBLE_DEVICES.
std::string cuda_visible_device(int index);

// The first line nvidia-smi prints for `query` (e.g. "name") about this process's CUDA device `index`;
// "" when it cannot tell (nvidia-smi itself ignores CUDA_VISIBLE_DEVICES).
std::string nvidia_smi_query(const std::string& query, int index);

// An AMD GPU as rocminfo lists it (an agent whose "Device Type" is GPU).
struct AmdGpuAgent {
  std::string name;            // the target, "gfx90a" (rocminfo may add feature flags: "gfx90a:sramecc+:xnack-")
  std::string marketing_name;  // "AMD Instinct MI250X"; "" when rocminfo gives none
  int compute_units = 0;
};

// The GPU agents in rocminfo's output, in its order (HIP device i is the i-th, before HIP_VISIBLE_DEVICES).
std::vector<AmdGpuAgent> parse_rocminfo(const std::string& text);

// parse_rocminfo of this machine's rocminfo; empty when it is missing or finds no GPU.
std::vector<AmdGpuAgent> amd_gpu_agents();

// The model of this machine's device `index` for `backend`: the GPU's name (nvidia-smi) for cuda and
// python-cuda, the AMD GPU's marketing name (rocminfo) for hip, "null device" for null, else the CPU model
// (/proc/cpuinfo).
std::string device_model(const std::string& backend, int index);

// "<target> <model>": the class of a device (see above).
std::string device_class(const std::string& target, const std::string& model);

// The class of this machine's device `index` for `backend`.
std::string local_device_class(const std::string& backend, int index);

// The memory of this machine's device `index`: the GPU's (nvidia-smi) for cuda and python-cuda, 0 (unknown)
// for hip, else the host's (/proc/meminfo); 0 when unknown.
int64_t device_memory_bytes(const std::string& backend, int index);

// The host's copy bandwidth, measured now: all cores copying 256 MiB between two buffers, best of three
// (GB/s counting bytes read and written). About 0.2 s.
double measure_host_copy_gbps();

}  // namespace kevolve
