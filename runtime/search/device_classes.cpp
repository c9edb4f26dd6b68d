#include "runtime/search/device_classes.hpp"

namespace kevolve {
namespace {

std::vector<ClassScore> flatten(std::map<std::string, ClassScore> by) {
  std::vector<ClassScore> out;
  for (auto& [k, c] : by) out.push_back(std::move(c));
  return out;
}

}  // namespace

void add_class_score(std::map<std::string, ClassScore>& by, const NodeRecord& n) {
  if (!n.scored() || n.device_class.empty()) return;
  ClassScore& c = by[n.device_class];
  c.device_class = n.device_class;
  ++c.evaluated;
  if (!n.correct()) return;
  ++c.correct;
  if (!c.best || n.fitness > c.best_fitness || (n.fitness == c.best_fitness && n.id < c.best)) {
    c.best = n.id;
    c.best_fitness = n.fitness;
    c.best_ms = n.candidate_ms;
  }
}

std::vector<ClassScore> scores_by_class(const std::vector<NodeRecord>& nodes) {
  std::map<std::string, ClassScore> by;
  for (auto& n : nodes) add_class_score(by, n);
  return flatten(std::move(by));
}

std::vector<ClassScore> scores_by_class(const std::map<uint64_t, NodeRecord>& nodes) {
  std::map<std::string, ClassScore> by;
  for (auto& [id, n] : nodes) add_class_score(by, n);
  return flatten(std::move(by));
}

const ClassScore* find_class(const std::vector<ClassScore>& scores, const std::string& pattern) {
  for (auto& c : scores)
    if (c.device_class.find(pattern) != std::string::npos) return &c;
  return nullptr;
}

}  // namespace kevolve
