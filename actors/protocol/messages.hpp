// Message structs that travel between actors (and, later, between nodes of a cluster). Records from
// runtime/ and storage/ are reused as they are; what is here only bundles them per request.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runtime/records/kb_query.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"
#include "runtime/records/node.hpp"
#include "runtime/search/strategy.hpp"
#include "runtime/records/store_batch.hpp"

namespace kevolve {

// search -> operator: make one child.
struct MakeRequest {
  std::string search;
  Proposal proposal;
  std::vector<NodeRecord> parents;
  std::vector<NodeRecord> known;  // nodes created since the previous request of this search (so the
                                  // operator can avoid re-proposing a kernel the search already has)
  uint64_t seed = 0;              // the operator's randomness for this child, drawn from the search's RNG
  // For operators that need context (LLM): sources, reports and the measured copy bandwidth of the
  // parents' devices; the best k kernels (best first); the device of the latest verdict (OperatorContext).
  std::vector<std::string> parent_sources, parent_reports;
  std::vector<double> parent_peak_gbps;
  std::vector<uint64_t> best_ids;
  std::vector<std::string> best_sources;
  std::string device;
  int32_t device_sms = 0;
  int64_t device_l2_bytes = 0;
  double device_gbps = 0;
};

// operator -> search.
struct MakeReply {
  bool ok = false;
  std::string error;
  Params params;
  Candidate candidate;
  std::string prompt, reply;  // stored with the node when the operator talks to an LLM
  std::string stop;           // set when the operator will make nothing more (e.g. its budget is spent)
};

// search -> context memory: one scored node and what the evaluator said about it.
struct ScoredNote {
  std::string search;
  NodeRecord node;
  std::string report;    // the verdict message (with the profile), or the compile log for compile errors
  double peak_gbps = 0;  // the device's measured copy bandwidth, when the backend measures one
};

// node -> build farm: compile one candidate for a backend.
struct BuildJob {
  std::string backend;  // cpu | null
  Candidate candidate;
  EvalOptions options;
};

// build farm -> node. When `decided`, `verdict` is final (compile_error, rejected) and no device is needed.
struct BuildOutcome {
  bool decided = false;
  EvalResult verdict;
  BuildResult build;
  std::string dir;  // private build folder (removed by the node once evaluated)
  std::string entry;
};

// node -> device registry -> device.
struct EvalJob {
  std::string search;
  uint64_t node = 0;
  std::string backend;
  std::string problem;  // problem name; devices get the spec from the search's registration
  Params params;        // the node's parameters (for logs, and the null backend's synthetic fitness)
  BuildOutcome build;
  EvalOptions options;
  // Set when the job goes to an evaluator on another node: the files of build.dir by name. The
  // evaluator writes them into a folder of its own and evaluates from there.
  std::map<std::string, std::string> files;
  // What the build was made for (backends/build_target.hpp) and the candidate itself: an evaluator whose
  // own target differs rebuilds it from source instead of running a binary built for another machine.
  std::string target;
  Candidate candidate;
  // [search] device_class: only a device whose class (DeviceInfo::device_class) contains this text takes the
  // job; "" = any device of the backend.
  std::string device_class;
};

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

// search -> whoever asks: where the search stands.
struct SearchStatus {
  std::string search;
  int64_t evaluated = 0, in_flight = 0, correct = 0, failed = 0;
  uint64_t best_node = 0;
  double best_fitness = 0;
  double rate = 0;  // evaluations per second since start
  bool finished = false;
  std::string stop_reason;
  std::string save_error;  // finished, but the store failed to save part of the search (why)
  bool paused = false;     // paused from the console: nothing new is proposed
};

}  // namespace kevolve
