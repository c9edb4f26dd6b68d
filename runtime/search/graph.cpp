#include "runtime/search/graph.hpp"

#include <algorithm>

namespace kevolve {

const char* node_state_name(NodeState s) {
  switch (s) {
    case NodeState::proposed:
      return "proposed";
    case NodeState::built:
      return "built";
    case NodeState::queued:
      return "queued";
    case NodeState::evaluated:
      return "evaluated";
    case NodeState::scored:
      return "scored";
  }
  return "?";
}

void SearchGraph::upsert(const NodeRecord& n) {
  auto it = nodes_.find(n.id);
  if (it == nodes_.end()) {
    const bool again = !mark_seen(n.id);  // dropped by trim() and sent again: held, not counted twice
    if (!again) {
      for (auto p : n.parents) children_[p].push_back(n.id);
      by_params_.insert(params_hash(n.params));
      ++added_;
      if (n.scored()) ++scored_;
      if (n.correct()) ++correct_;
    }
    nodes_.emplace(n.id, n);
    return;
  }
  if (!it->second.scored() && n.scored()) ++scored_;
  if (it->second.scored() && !n.scored()) --scored_;
  if (!it->second.correct() && n.correct()) ++correct_;
  if (it->second.correct() && !n.correct()) --correct_;
  it->second = n;
}

void SearchGraph::set_state(uint64_t id, NodeState s) {
  auto it = nodes_.find(id);
  if (it != nodes_.end() && !it->second.scored() && s != NodeState::scored) it->second.state = s;
}

const NodeRecord* SearchGraph::find(uint64_t id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

const std::vector<uint64_t>& SearchGraph::children(uint64_t id) const {
  static const std::vector<uint64_t> none;
  auto it = children_.find(id);
  return it == children_.end() ? none : it->second;
}

std::vector<uint64_t> SearchGraph::roots() const {
  std::vector<uint64_t> r;
  for (auto& [id, n] : nodes_)
    if (n.parents.empty()) r.push_back(id);
  return r;
}

std::optional<uint64_t> SearchGraph::best() const {
  std::optional<uint64_t> b;
  double f = -1;
  for (auto& [id, n] : nodes_)
    if (n.correct() && n.fitness > f) {
      f = n.fitness;
      b = id;
    }
  return b;
}

std::vector<uint64_t> SearchGraph::best_k(size_t k) const {
  std::vector<const NodeRecord*> correct;
  for (auto& [id, n] : nodes_)
    if (n.correct()) correct.push_back(&n);
  std::stable_sort(correct.begin(), correct.end(), [](auto* a, auto* b) { return a->fitness > b->fitness; });
  std::vector<uint64_t> out;
  for (size_t i = 0; i < correct.size() && i < k; ++i) out.push_back(correct[i]->id);
  return out;
}

NodeCounts count_nodes(const std::vector<NodeRecord>& nodes) {
  NodeCounts c;
  for (auto& n : nodes) {
    if (!n.scored()) {
      ++c.in_flight;
      continue;
    }
    ++c.evaluated;
    ++(n.correct() ? c.correct : c.failed);
  }
  return c;
}

bool SearchGraph::mark_seen(uint64_t id) {
  if (id >= (uint64_t(1) << 27)) return seen_sparse_.insert(id).second;  // ids are dense from 1: not in a search
  if (id >= seen_.size()) seen_.resize(std::max<size_t>(id + 1, seen_.size() * 2));
  const bool first = !seen_[id];
  seen_[id] = true;
  return first;
}

void SearchGraph::trim() {
  while (window_ > 0 && nodes_.size() > window_) {
    children_.erase(nodes_.begin()->first);
    nodes_.erase(nodes_.begin());
  }
}

bool SearchGraph::has_params(const Params& p) const { return by_params_.count(params_hash(p)) > 0; }

uint64_t SearchGraph::params_hash(const Params& p) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over params_key, then a final mix
  for (unsigned char c : params_key(p)) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

std::string SearchGraph::params_key(const Params& p) {
  std::string k;
  for (auto& [name, value] : p) {
    k += name;
    k += '=';
    k += value;
    k += ';';
  }
  return k;
}

}  // namespace kevolve
