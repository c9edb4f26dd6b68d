#include "runtime/search/greedy.hpp"

#include <algorithm>

namespace kevolve {

std::vector<Proposal> GreedyStrategy::propose(const SearchGraph& g, size_t n, Rng&) {
  if (g.size() == 0) return {{"seed", {}, 0}};
  std::vector<const NodeRecord*> ranked;
  for (auto& [id, node] : g.nodes())
    if (node.correct()) ranked.push_back(&node);
  std::sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) {
    return a->fitness != b->fitness ? a->fitness > b->fitness : a->id < b->id;
  });
  std::vector<Proposal> out;
  for (auto* node : ranked) {
    const int used = static_cast<int>(g.children(node->id).size());
    for (int k = used; k < c_.max_children && out.size() < n; ++k) out.push_back({"mutate", {node->id}, 0});
    if (out.size() >= n) break;
  }
  if (out.empty() && ranked.empty()) return repair_proposals(g, c_, n);
  return out;
}

}  // namespace kevolve
