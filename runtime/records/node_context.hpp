// What an operator may know of a node beyond its record, and of the device the search's kernels run on:
// kept by the search for operators that need context (LLM) and sent with each request to the operator.
#pragma once
#include <cstdint>
#include <string>

namespace kevolve {

// A node's source, the evaluator's report, and the copy bandwidth the device that evaluated it measured
// (EvalResult::peak_gbps; 0 = unknown).
struct NodeContext {
  uint64_t id = 0;
  std::string source, report;
  double peak_gbps = 0;
};

// The device that gave the search's latest verdict, as it described itself (EvalResult: device, sms,
// l2_bytes, peak_gbps). Empty name = no verdict yet.
struct EvaluatingDevice {
  std::string name;      // e.g. "NVIDIA H200 (sm_90)" or the CPU model
  int32_t sms = 0;       // GPU multiprocessors (0 = not a GPU, or unknown)
  int64_t l2_bytes = 0;  // GPU L2 cache
  double copy_gbps = 0;  // its measured copy bandwidth
};

}  // namespace kevolve
