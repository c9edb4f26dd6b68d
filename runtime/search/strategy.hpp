// Strategy: how a search picks what to try next — pure C++, no actors, deterministic for a seed.
//
// Lifecycle (same for every strategy):
//   init(graph)        rebuild internal state from a graph (empty for a new search, the stored graph on resume)
//   propose(graph, n)  up to n proposals (parents + operation); empty means nothing to try now — with
//                      nothing in flight either, the search is finished
//   observe(node)      a node of the graph was scored
//   bounded(), keeps() whether the graph may drop scored records the strategy no longer needs
// The graph passed to propose() includes nodes still in flight, so batches do not pile onto one parent.
// A failed node is never a parent for optimisation or crossover; it may be expanded for repair when the
// operator can repair, at most `max_repairs` times.
#pragma once
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/search/graph.hpp"

namespace kevolve {

using Rng = std::mt19937_64;
std::string save_rng(const Rng& r);
bool load_rng(Rng& r, const std::string& state);

struct Proposal {
  Operation op = Operation::seed;
  std::vector<uint64_t> parents;
  int32_t island = 0;
};

struct StrategyConfig {
  std::string name = "greedy";           // greedy | mcts | evolutionary
  int max_children = 8;                  // greedy: children per node before moving to the next best
  double exploration = 1.4;              // mcts: UCT exploration constant c
  double widening = 2.0;                 // mcts: a node may have ceil(widening * sqrt(visits)) children
  int islands = 2;                       // evolutionary
  int population = 6;                    // evolutionary: best nodes per island that can be parents
  std::string selection = "tournament";  // evolutionary: tournament | proportional
  int tournament_size = 3;
  double crossover_rate = 0.3;
  int migration_interval = 3;  // evolutionary: every N generations an island takes the neighbour's best
  bool repair = false;         // set when the operator can repair failed nodes
  int max_repairs = 2;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual void init(const SearchGraph&) {}
  virtual std::vector<Proposal> propose(const SearchGraph& g, size_t n, Rng& rng) = 0;
  virtual void observe(const SearchGraph&, const NodeRecord&) {}
  // Whether the strategy works from its own summary of the search, so that the graph may drop the records
  // of scored nodes that keeps() does not hold (SearchGraph::trim): memory by the work in flight. A strategy
  // that walks the whole graph (MCTS's tree, the islands' populations) says no.
  virtual bool bounded() const { return false; }
  // With bounded(): whether the node's record must stay in the graph (a node the strategy may still expand).
  virtual bool keeps(uint64_t) const { return false; }
};

// Chosen by name; an unknown name or a bad setting is an error naming it.
Expected<std::unique_ptr<Strategy>> make_strategy(const StrategyConfig& c);

// A resumed search's stored nodes into its graph, the strategy's state rebuilt from them; each record is
// emptied once the graph holds its copy. window > 0 (a bounded strategy; the graph gets this window): the
// records go in from the newest back — a node's children are linked before the strategy observes it, as
// init() on the whole graph would see them — and the graph trims as they come (keeping the nodes in flight
// and those the strategy keeps), so the load holds the window, not the store. window == 0: every record,
// then init(). Both leave the strategy in the same state.
void load_stored(SearchGraph& g, Strategy& s, std::vector<NodeRecord>& nodes, size_t window);

// The same load from records read one at a time: each(newest_first, visit) calls visit once per stored node, in
// id order (from the highest id down when newest_first), and returns how the read went. A bounded load then holds
// the window and the record being read, never the whole store. Returns each's status.
using StoredNodes = std::function<Status(bool newest_first, const std::function<void(NodeRecord&)>& visit)>;
Status load_stored(SearchGraph& g, Strategy& s, const StoredNodes& each, size_t window);

// Shared by strategies: the repair proposals allowed for failed nodes without a correct node to build on.
std::vector<Proposal> repair_proposals(const SearchGraph& g, const StrategyConfig& c, size_t n);

}  // namespace kevolve
