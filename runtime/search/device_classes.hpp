// Fitness per device class. A speedup is measured against the reference on the same device, but two
// device classes (backends/device_info.hpp: "cuda:sm_90 NVIDIA H200", "cpu:znver3 AMD EPYC 7B13") still
// give different figures for one kernel, so a search's results are summarised per class: how many of its
// nodes each class evaluated, how many were correct, and the best of them. Nodes that never reached a
// device (a failed build) belong to no class.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/records/node.hpp"

namespace kevolve {

struct ClassScore {
  std::string device_class;
  int64_t evaluated = 0, correct = 0;
  uint64_t best = 0;  // best correct node of this class (0: none); lowest id on ties
  double best_fitness = 0;
  double best_ms = 0;  // its candidate time
};

// Counts one more node into its class's entry (nodes not scored or without a class count nowhere).
void add_class_score(std::map<std::string, ClassScore>& by_class, const NodeRecord& n);

// One entry per device class among the scored nodes, ordered by class name.
std::vector<ClassScore> scores_by_class(const std::vector<NodeRecord>& nodes);
std::vector<ClassScore> scores_by_class(const std::map<uint64_t, NodeRecord>& nodes);

// The entry whose class contains `pattern` (the first, by class name); nullptr when none does.
const ClassScore* find_class(const std::vector<ClassScore>& scores, const std::string& pattern);

}  // namespace kevolve
