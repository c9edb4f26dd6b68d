// Evolutionary search with islands: each island's population is its best `population` correct nodes;
// parents are chosen by tournament or fitness-proportional selection; a share of children are
// crossovers of two parents; every `migration_interval` generations an island breeds from its
// neighbour's best (a "migrate" node). Its state, each island's population and count of scored nodes, is
// kept as nodes are scored and rebuilt from the graph by init(), so with the random-number state a resumed
// search continues exactly; the graph only has to hold the populations' records (bounded(), keeps()).
#pragma once
#include <set>
#include <unordered_set>

#include "runtime/search/strategy.hpp"

namespace kevolve {

class EvolutionaryStrategy : public Strategy {
 public:
  explicit EvolutionaryStrategy(StrategyConfig c) : c_(std::move(c)) {}
  std::string name() const override { return "evolutionary"; }
  void init(const SearchGraph& g) override;
  std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) override;
  void observe(const SearchGraph& g, const NodeRecord& node) override;
  bool bounded() const override { return true; }
  bool keeps(uint64_t id) const override { return members_.count(id) > 0; }

  // The island's current population, best first (its best `population` correct nodes).
  std::vector<const NodeRecord*> population(const SearchGraph& g, int32_t island) const;

 private:
  struct Island {
    std::set<std::pair<double, uint64_t>> best;  // (-fitness, id), at most `population`
    size_t born = 0;                             // its scored nodes
  };
  Island& island(int32_t i);
  const Island* find_island(int32_t i) const;  // nullptr before the island's first scored node
  const NodeRecord* select(const std::vector<const NodeRecord*>& pop, Rng& rng) const;
  StrategyConfig c_;
  std::vector<Island> islands_;
  std::unordered_set<uint64_t> members_;  // every island's population
};

}  // namespace kevolve
