// Evolutionary search with islands: each island's population is its best `population` correct nodes;
// parents are chosen by tournament or fitness-proportional selection; a share of children are
// crossovers of two parents; every `migration_interval` generations an island breeds from its
// neighbour's best (a "migrate" node). Its state is the graph itself (island of each node) plus the
// random-number state, so a resumed search continues exactly.
#pragma once
#include "runtime/search/strategy.hpp"

namespace kevolve {

class EvolutionaryStrategy : public Strategy {
 public:
  explicit EvolutionaryStrategy(StrategyConfig c) : c_(std::move(c)) {}
  std::string name() const override { return "evolutionary"; }
  std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) override;

  // The island's current population, best first.
  std::vector<const NodeRecord*> population(const SearchGraph& g, int32_t island) const;

 private:
  const NodeRecord* select(const std::vector<const NodeRecord*>& pop, Rng& rng) const;
  StrategyConfig c_;
};

}  // namespace kevolve
