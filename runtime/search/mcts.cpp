#include "runtime/search/mcts.hpp"

#include <cmath>

namespace kevolve {

void MctsStrategy::init(const SearchGraph& g) {
  stats_.clear();
  for (auto& [id, node] : g.nodes())
    if (node.scored()) observe(g, node);
}

void MctsStrategy::observe(const SearchGraph& g, const NodeRecord& node) {
  backpropagate(g, node.id, node.correct() ? node.fitness / (1 + node.fitness) : 0.0);
}

void MctsStrategy::backpropagate(const SearchGraph& g, uint64_t id, double reward) {
  for (const NodeRecord* n = g.find(id); n; n = n->parents.empty() ? nullptr : g.find(n->parents[0])) {
    auto& s = stats_[n->id];
    s.visits += 1;
    s.reward += reward;
  }
}

std::vector<Proposal> MctsStrategy::propose(const SearchGraph& g, size_t n, Rng&) {
  if (g.size() == 0) return {{Operation::seed, {}, 0}};
  auto roots = g.roots();
  const NodeRecord* root = g.find(roots.front());
  if (!root->scored()) return {};
  if (!root->correct()) return repair_proposals(g, c_, n);
  std::map<uint64_t, int> pending;  // children proposed in this batch (virtual visits)
  std::vector<Proposal> out;
  auto visits = [&](uint64_t id) {
    auto it = stats_.find(id);
    return (it == stats_.end() ? 0.0 : it->second.visits) + pending[id];
  };
  for (size_t k = 0; k < n; ++k) {
    const NodeRecord* v = root;
    for (;;) {
      const auto& kids = g.children(v->id);
      const double nv = std::max(1.0, visits(v->id));
      const size_t allowed = static_cast<size_t>(std::ceil(c_.widening * std::sqrt(nv)));
      if (kids.size() + static_cast<size_t>(pending[v->id]) < allowed) break;  // expand v
      const NodeRecord* pick = nullptr;
      double best = -1;
      for (auto cid : kids) {
        const NodeRecord* c = g.find(cid);
        if (!c->correct()) continue;  // failures and in-flight nodes are leaves
        auto it = stats_.find(cid);
        const double nc = visits(cid);
        const double mean = it == stats_.end() || nc == 0 ? 0 : it->second.reward / nc;
        const double uct = mean + c_.exploration * std::sqrt(std::log(nv) / std::max(nc, 1.0));
        if (uct > best) {
          best = uct;
          pick = c;
        }
      }
      if (!pick) break;
      v = pick;
    }
    out.push_back({Operation::mutate, {v->id}, 0});
    pending[v->id] += 1;
  }
  return out;
}

}  // namespace kevolve
