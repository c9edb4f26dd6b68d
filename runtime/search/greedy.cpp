#include "runtime/search/greedy.hpp"

#include <iterator>

namespace kevolve {

void GreedyStrategy::init(const SearchGraph& g) {
  open_.clear();
  open_ids_.clear();
  for (auto& [id, node] : g.nodes()) observe(g, node);
}

void GreedyStrategy::observe(const SearchGraph& g, const NodeRecord& node) {
  if (node.correct() && g.children(node.id).size() < static_cast<size_t>(c_.max_children)) {
    if (open_.insert({-node.fitness, node.id}).second) open_ids_.insert(node.id);
    if (open_.size() > kOpenCap) {  // the worst leaves
      open_ids_.erase(std::prev(open_.end())->second);
      open_.erase(std::prev(open_.end()));
    }
  }
}

std::vector<Proposal> GreedyStrategy::propose(const SearchGraph& g, size_t n, Rng&) {
  if (g.size() == 0) return {{Operation::seed, {}, 0}};
  std::vector<Proposal> out;
  for (auto it = open_.begin(); it != open_.end() && out.size() < n;) {
    const uint64_t id = it->second;
    const size_t used = g.children(id).size();
    if (used >= static_cast<size_t>(c_.max_children)) {  // full: it never gets more children
      open_ids_.erase(id);
      it = open_.erase(it);
      continue;
    }
    // Children still at the operator are not in the graph yet, so a node may get a few more than
    // max_children when proposals overlap; the cap is approximate by that much.
    for (size_t k = used; k < static_cast<size_t>(c_.max_children) && out.size() < n; ++k)
      out.push_back({Operation::mutate, {id}, 0});
    ++it;
  }
  if (out.empty() && g.best() == std::nullopt) return repair_proposals(g, c_, n);
  return out;
}

}  // namespace kevolve
