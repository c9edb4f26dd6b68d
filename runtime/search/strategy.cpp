#include "runtime/search/strategy.hpp"

#include <algorithm>
#include <sstream>

#include "runtime/search/evolutionary.hpp"
#include "runtime/search/greedy.hpp"
#include "runtime/search/mcts.hpp"

namespace kevolve {

std::string save_rng(const Rng& r) {
  std::ostringstream os;
  os << r;
  return os.str();
}

bool load_rng(Rng& r, const std::string& state) {
  std::istringstream is(state);
  is >> r;
  return !is.fail();
}

Expected<std::unique_ptr<Strategy>> make_strategy(const StrategyConfig& c) {
  using R = Expected<std::unique_ptr<Strategy>>;
  if (c.name == "greedy") {
    if (c.max_children < 1) return R::failure("strategy.max_children: expected >= 1");
    return R(std::make_unique<GreedyStrategy>(c));
  }
  if (c.name == "mcts") {
    if (c.exploration < 0) return R::failure("strategy.exploration: expected >= 0");
    if (c.widening <= 0) return R::failure("strategy.widening: expected > 0");
    return R(std::make_unique<MctsStrategy>(c));
  }
  if (c.name == "evolutionary") {
    if (c.islands < 1) return R::failure("strategy.islands: expected >= 1");
    if (c.population < 1) return R::failure("strategy.population: expected >= 1");
    if (c.selection != "tournament" && c.selection != "proportional")
      return R::failure("strategy.selection: '" + c.selection + "' (expected tournament or proportional)");
    if (c.tournament_size < 1) return R::failure("strategy.tournament_size: expected >= 1");
    if (c.crossover_rate < 0 || c.crossover_rate > 1) return R::failure("strategy.crossover_rate: expected 0..1");
    if (c.migration_interval < 1) return R::failure("strategy.migration_interval: expected >= 1");
    return R(std::make_unique<EvolutionaryStrategy>(c));
  }
  return R::failure("strategy.name: '" + c.name + "' (expected greedy, mcts or evolutionary)");
}

std::vector<Proposal> repair_proposals(const SearchGraph& g, const StrategyConfig& c, size_t n) {
  std::vector<Proposal> out;
  if (!c.repair) return out;
  for (auto& [id, node] : g.nodes()) {
    if (out.size() >= n) break;
    if (!node.scored() || node.correct()) continue;
    int repairs = 0;
    for (auto child : g.children(id)) repairs += g.find(child)->op == Operation::repair;
    if (repairs < c.max_repairs) out.push_back({Operation::repair, {id}, node.island});
  }
  return out;
}

Status load_stored(SearchGraph& g, Strategy& s, const StoredNodes& each, size_t window) {
  Status read;
  if (window == 0) {
    read = each(false, [&g](NodeRecord& n) { g.upsert(std::move(n)); });
    s.init(g);
  } else {
    g.retain(window);
    s.init(g);  // on the empty graph: the strategy starts clear and observes every node below
    const auto keep = [&s](const NodeRecord& n) { return !n.scored() || s.keeps(n.id); };
    read = each(true, [&](NodeRecord& n) {
      g.upsert(n);
      s.observe(g, n);
      g.trim(keep);
    });
  }
  return read;
}

void load_stored(SearchGraph& g, Strategy& s, std::vector<NodeRecord>& nodes, size_t window) {
  std::sort(nodes.begin(), nodes.end(), [](const NodeRecord& a, const NodeRecord& b) { return a.id < b.id; });
  const StoredNodes each = [&nodes](bool newest_first, const std::function<void(NodeRecord&)>& visit) {
    if (newest_first)
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        visit(*it);
        *it = NodeRecord{};
      }
    else
      for (auto& n : nodes) {
        visit(n);
        n = NodeRecord{};
      }
    return Status{};
  };
  load_stored(g, s, each, window).ignore("the nodes come from memory: every visit succeeds");
  std::vector<NodeRecord>().swap(nodes);
}

}  // namespace kevolve
