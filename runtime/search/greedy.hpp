// Greedy best-first: expand the best correct node until it has max_children children, then the next
// best. Keeps the correct nodes with room for children ordered by fitness, updated on observe(), so a
// proposal costs O(log n) even in a search of 100,000 nodes, and its memory stays bounded (kOpenCap).
#pragma once
#include <set>
#include <unordered_set>

#include "runtime/search/strategy.hpp"

namespace kevolve {

class GreedyStrategy : public Strategy {
 public:
  explicit GreedyStrategy(StrategyConfig c) : c_(std::move(c)) {}
  std::string name() const override { return "greedy"; }
  void init(const SearchGraph& g) override;
  std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) override;
  void observe(const SearchGraph& g, const NodeRecord& node) override;
  // The correct nodes held as candidates for children: at most kOpenCap, the best ones (a node behind
  // 65,536 better ones with room for children is not expanded in any search this engine runs).
  size_t open_size() const { return open_.size(); }
  bool bounded() const override { return true; }
  bool keeps(uint64_t id) const override { return open_ids_.count(id) > 0; }
  static constexpr size_t kOpenCap = 65536;

 private:
  StrategyConfig c_;
  std::set<std::pair<double, uint64_t>> open_;  // (-fitness, id) of correct nodes that may get children
  std::unordered_set<uint64_t> open_ids_;       // the same ids, for keeps()
};

}  // namespace kevolve
