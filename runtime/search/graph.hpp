// SearchGraph: the nodes of one search and their parent/child links, with the queries strategies need.
// Pure data; the search actor owns one and the store persists every change.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <unordered_set>
#include <vector>

#include "runtime/records/node.hpp"

namespace kevolve {

// A set of 64-bit hashes in one open-addressing table (linear probing, at most 70 % full): about 11 bytes
// per hash, against about 40 in a std::unordered_set.
class HashSet64 {
 public:
  bool insert(uint64_t h);  // true when it was not held
  bool contains(uint64_t h) const;
  size_t size() const { return size_; }
  template <class F>
  void each(F&& f) const {  // every held hash (0 is held as 1)
    for (uint64_t k : slots_)
      if (k != 0) f(k);
  }

 private:
  static uint64_t key(uint64_t h) { return h == 0 ? 1 : h; }  // 0 marks an empty slot (0 and 1 are one key)
  void place(uint64_t k);  // into the first empty slot of k's probe run (there is one: the load stays < 0.7)
  std::vector<uint64_t> slots_;
  size_t size_ = 0;
};

// The parameter hashes of one search's nodes. The graphs of one process that serve the same search (the
// search actor's and its operator's) share one, so the set is held once; reads and inserts may come from
// several threads.
//
// With a store lookup (the engine's, over the search's store: storage/ keeps a key per node's parameters,
// written in the same batch as the node) the index holds in memory only the hashes the store does not hold
// yet: once `sweep_at` are held, those the store now has are let go. Its memory is then bounded by the
// nodes not yet committed, not by the length of the search.
class ParamIndex {
 public:
  using Lookup = std::function<bool(uint64_t)>;  // true when the store holds the hash
  ParamIndex() = default;
  explicit ParamIndex(Lookup stored, size_t sweep_at = size_t(1) << 16);
  bool insert(uint64_t h);  // true when it was held neither here nor in the store
  bool contains(uint64_t h) const;
  size_t held() const;  // the hashes held in memory

 private:
  void sweep();  // keeps only the held hashes the store does not hold yet (under the writer's lock)
  mutable std::shared_mutex m_;
  HashSet64 set_;
  Lookup stored_;
  size_t sweep_base_ = 0, sweep_at_ = 0;
};

class SearchGraph {
 public:
  SearchGraph() = default;
  SearchGraph(SearchGraph&&) = default;
  SearchGraph& operator=(SearchGraph&&) = default;
  SearchGraph(const SearchGraph&) = delete;  // a copy would share the parameter index
  SearchGraph& operator=(const SearchGraph&) = delete;

  // Makes `index` this graph's parameter index, shared with the other graphs of the same search in this
  // process. Called before the first upsert(); has_params() then answers for every graph that shares it.
  void share_params(std::shared_ptr<ParamIndex> index) { by_params_ = std::move(index); }

  // With a window (0 = none, the default), trim() drops the records of the oldest nodes (lowest ids) once more
  // than window + window/4 are held, down to `window`; their ids and parameters (as hashes) are kept. Never
  // dropped: the kTop best correct nodes, and those `keep` holds (the search keeps its nodes in flight and
  // the ones its strategy may still expand; the operator's copy keeps none, as each request carries its
  // parents' records). Then nodes(), find(), children() and roots() see only the nodes held; size() and
  // has_params() count every node ever added; scored() and correct() count the states seen while each node
  // was held; best() and best_k(k <= kTop) answer for the whole search.
  void retain(size_t window) { window_ = window; }
  void trim(const std::function<bool(const NodeRecord&)>& keep = {});
  static constexpr size_t kTop = 64;
  // Adds or replaces a node (replacing keeps child links; parents never change).
  void upsert(const NodeRecord& n);
  const NodeRecord* find(uint64_t id) const;
  // Moves an unscored node along its lifecycle (proposed -> built -> queued -> evaluated); a scored node
  // only changes through upsert().
  void set_state(uint64_t id, NodeState s);
  const std::map<uint64_t, NodeRecord>& nodes() const { return nodes_; }
  const std::vector<uint64_t>& children(uint64_t id) const;
  std::vector<uint64_t> roots() const;

  size_t size() const { return added_; }
  size_t scored() const { return scored_; }
  size_t correct() const { return correct_; }  // scored ok; kept as nodes change, not counted on each ask
  size_t in_flight() const { return size() - scored_; }
  // Best correct node (highest fitness; lowest id on ties), if any.
  std::optional<uint64_t> best() const;
  // The k best correct nodes, best first (highest fitness; lowest id on ties); fewer when fewer are correct.
  std::vector<uint64_t> best_k(size_t k) const;
  // True when some node already has exactly these parameters (so a proposal would re-evaluate it). Kept as
  // 64-bit hashes of params_key: a collision (about 1 in 10^12 at 10^7 nodes) would refuse one new point.
  bool has_params(const Params& p) const;

 private:
  bool mark_seen(uint64_t id);                                   // true the first time `id` is added
  bool was_seen(uint64_t id) const;                              // added before (held or dropped)
  void rank(const NodeRecord* before, const NodeRecord& after);  // keeps top_ as a node changes

  std::map<uint64_t, NodeRecord> nodes_;
  std::map<uint64_t, std::vector<uint64_t>> children_;
  std::shared_ptr<ParamIndex> by_params_ = std::make_shared<ParamIndex>();  // params_hash of every node's parameters
  std::vector<bool> seen_;                                                  // by id: added once (held or dropped)
  std::unordered_set<uint64_t> seen_sparse_;                                // the same for ids beyond 2^27
  size_t added_ = 0, scored_ = 0, correct_ = 0;
  std::set<std::pair<double, uint64_t>> top_;  // (-fitness, id) of the kTop best correct nodes
  size_t window_ = 0, next_trim_ = 0;
};

// Scored nodes (correct or failed) and those still in flight, of a list of nodes (a store's read).
struct NodeCounts {
  int64_t evaluated = 0, correct = 0, failed = 0, in_flight = 0;
  void add(const NodeRecord& n);  // one more node: in flight until scored, then correct or failed
};
NodeCounts count_nodes(const std::vector<NodeRecord>& nodes);

}  // namespace kevolve
