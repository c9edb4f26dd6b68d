// What an evaluator's device is and where it runs (registered with the node, stamped on its verdicts).
#pragma once
#include <cstdint>
#include <string>

namespace kevolve {

// evaluator -> coordinator, once per device: what it is and where it runs (stored with each evaluation
// it makes, so a figure always says where it was measured).
struct DeviceInfo {
  std::string host;          // the evaluator's host name
  int64_t pid = 0;           // the evaluator process
  int index = 0;             // device index within the evaluator
  std::string backend;       // cpu | cuda | null
  std::string name;          // e.g. "NVIDIA H200 (sm_90)" or the CPU model
  std::string arch;          // its build target: "cpu:znver3", "cuda:sm_90", ... (backends/build_target.hpp)
  std::string fingerprint;   // device, driver, compiler versions in one line
  std::string device_class;  // arch + model (backends/device_info.hpp): what a search's device_class pin matches
  int64_t memory_bytes = 0;  // the device's memory (GPU: its own; CPU: the host's); 0 = unknown
  double copy_gbps = 0;      // measured copy bandwidth: the host's at registration (CPU), the worker's first
                             // measurement (CUDA: device-to-device copy, reported with its first verdict); 0 = not yet
};

}  // namespace kevolve
