// SearchGraph: the nodes of one search and their parent/child links, with the queries strategies need.
// Pure data; the search actor owns one and the store persists every change.
#pragma once
#include <map>
#include <unordered_set>
#include <optional>
#include <vector>

#include "runtime/records/node.hpp"

namespace kevolve {

class SearchGraph {
 public:
  // Adds or replaces a node (replacing keeps child links; parents never change).
  void upsert(const NodeRecord& n);
  const NodeRecord* find(uint64_t id) const;
  // Moves an unscored node along its lifecycle (proposed -> built -> queued -> evaluated); a scored node
  // only changes through upsert().
  void set_state(uint64_t id, NodeState s);
  const std::map<uint64_t, NodeRecord>& nodes() const { return nodes_; }
  const std::vector<uint64_t>& children(uint64_t id) const;
  std::vector<uint64_t> roots() const;

  size_t size() const { return nodes_.size(); }
  size_t scored() const { return scored_; }
  size_t correct() const { return correct_; }  // scored ok; kept as nodes change, not counted on each ask
  size_t in_flight() const { return nodes_.size() - scored_; }
  // Best correct node (highest fitness; lowest id on ties), if any.
  std::optional<uint64_t> best() const;
  // The k best correct nodes, best first (highest fitness; lowest id on ties); fewer when fewer are correct.
  std::vector<uint64_t> best_k(size_t k) const;
  // True when some node already has exactly these parameters (so a proposal would re-evaluate it).
  bool has_params(const Params& p) const;
  static std::string params_key(const Params& p);

 private:
  std::map<uint64_t, NodeRecord> nodes_;
  std::map<uint64_t, std::vector<uint64_t>> children_;
  std::unordered_set<std::string> by_params_;  // canonical "k=v;..." of every node's parameters
  size_t scored_ = 0, correct_ = 0;
};

// Scored nodes (correct or failed) and those still in flight, of a list of nodes (a store's read).
struct NodeCounts {
  int64_t evaluated = 0, correct = 0, failed = 0, in_flight = 0;
};
NodeCounts count_nodes(const std::vector<NodeRecord>& nodes);

}  // namespace kevolve
