// NodeRecord: one candidate in a search graph — where it came from, where it is in its lifecycle,
// and how it scored. SearchRecord: one search. Both are stored (storage/) and travel between actors.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/records/evaluation.hpp"
#include "runtime/records/operation.hpp"

namespace kevolve {

// proposed -> built -> queued -> evaluated -> scored (a failed build goes straight to scored).
enum class NodeState : int32_t { proposed = 0, built = 1, queued = 2, evaluated = 3, scored = 4 };
const char* node_state_name(NodeState s);

using Params = std::map<std::string, std::string>;  // template parameter -> value

// A point's parameters as one string ("name=value;" in name order), and its 64-bit hash (never 0): what a
// search's parameter index holds (runtime/search/graph.hpp) and what the store keys it by (storage/).
std::string params_key(const Params& p);
uint64_t params_hash(const Params& p);

struct NodeRecord {
  uint64_t id = 0;                // 1, 2, 3 ... in creation order within the search
  std::vector<uint64_t> parents;  // none (seed), one (mutate / repair), two (crossover)
  Operation op = Operation::seed;
  Params params;
  int32_t island = 0;  // evolutionary strategy's island
  NodeState state = NodeState::proposed;
  EvalStatus status = EvalStatus::harness_error;  // meaningful once scored
  std::string reason, message;
  double fitness = 0;  // speedup over the reference when ok, else 0
  double candidate_ms = 0, reference_ms = 0;
  // The device class that measured `fitness` ("cuda:sm_90 NVIDIA H200"); fitness is compared within a class
  // (runtime/search/device_classes.hpp); "" for nodes stored before classes were recorded, or never evaluated.
  std::string device_class;

  bool scored() const { return state == NodeState::scored; }
  bool correct() const { return scored() && status == EvalStatus::ok; }
};

struct SearchRecord {
  std::string id;       // e.g. "rmsnorm_fwd-greedy-s1"
  std::string problem;  // problem name
  std::string strategy;
  std::string config_text;  // the config the search was started with
  uint64_t next_node = 1;   // id of the next node to create
  std::string rng_state;    // the strategy's random-number state after the last proposal
  bool finished = false;
  std::string stop_reason;
  bool submitted = false;  // started by a console submission on a node: resumed when that node restarts
  // The console's pause and cancel, kept so that a restart honours them: a paused search is resumed paused
  // (its unscored nodes evaluated, nothing new proposed); a cancelled one only finishes what it had started.
  bool paused = false;
  bool cancelled = false;
};

}  // namespace kevolve
