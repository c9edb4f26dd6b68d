// Greedy best-first: expand the best correct node until it has max_children children, then the next best.
#pragma once
#include "runtime/search/strategy.hpp"

namespace kevolve {

class GreedyStrategy : public Strategy {
 public:
  explicit GreedyStrategy(StrategyConfig c) : c_(std::move(c)) {}
  std::string name() const override { return "greedy"; }
  std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) override;

 private:
  StrategyConfig c_;
};

}  // namespace kevolve
