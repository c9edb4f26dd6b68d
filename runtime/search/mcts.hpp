// Monte-Carlo tree search over the search graph (first-parent tree), UCT selection with progressive
// widening. Reward of a node = f / (1 + f) for fitness f (0 for failures), so rewards lie in [0, 1).
// Statistics (visits, reward sums) are updated on observe() and rebuilt from the graph by init().
#pragma once
#include <map>

#include "runtime/search/strategy.hpp"

namespace kevolve {

class MctsStrategy : public Strategy {
 public:
  explicit MctsStrategy(StrategyConfig c) : c_(std::move(c)) {}
  std::string name() const override { return "mcts"; }
  void init(const SearchGraph& g) override;
  std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) override;
  void observe(const SearchGraph& g, const NodeRecord& node) override;

  struct Stats {
    double visits = 0, reward = 0;
  };
  const Stats& stats(uint64_t id) const { return stats_.at(id); }

 private:
  void backpropagate(const SearchGraph& g, uint64_t id, double reward);
  StrategyConfig c_;
  std::map<uint64_t, Stats> stats_;
};

}  // namespace kevolve
