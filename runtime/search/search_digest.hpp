// SearchDigest: what the views of a search (report.html, the dashboard, the console) show about its nodes,
// gathered in one pass over them without holding them: counts, the best and the seed, the best-so-far
// curve, the failure mix, fitness per device class, the fittest and the latest node ids, and the full
// records of a few fittest. Every field is bounded by its limit, not by the number of nodes, so a search
// of ten million nodes is summarised in the memory of a small one. Pure C++: the store feeds it
// (Store::each_node), a test can feed it a vector.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/records/node.hpp"
#include "runtime/search/device_classes.hpp"
#include "runtime/search/graph.hpp"

namespace kevolve {

struct DigestLimits {
  size_t keep_all = 0;      // every record is kept while the search has at most this many nodes
  size_t fittest = 0;       // ids of the fittest correct nodes kept
  size_t latest = 0;        // ids of the highest-id nodes kept
  size_t top_records = 10;  // full records of the fittest correct nodes kept
  size_t mix_slices = 20;   // the failure mix has between mix_slices / 2 and mix_slices slices (fewer when short)
};

// One point of the best-so-far curve: after `index` scored nodes the best fitness was `best`, reached by
// node `node` (0 for the closing point).
struct CurvePoint {
  int64_t index = 0;
  double best = 0;
  uint64_t node = 0;
};

// Statuses of consecutive scored nodes: the slice ends after `upto` scored nodes.
struct MixSlice {
  int64_t upto = 0;
  std::map<std::string, int64_t> counts;
};

class SearchDigest {
 public:
  explicit SearchDigest(DigestLimits limits = {});
  // One more node; nodes come in id order. May move from `n`.
  void add(NodeRecord& n);

  int64_t total() const { return total_; }
  const NodeCounts& counts() const { return counts_; }
  const std::map<std::string, int64_t>& by_status() const { return by_status_; }  // scored nodes per status
  uint64_t best() const { return best_; }  // highest fitness among correct nodes, lowest id on ties; 0: none
  double best_fitness() const { return best_fitness_; }
  const std::string& best_class() const { return best_class_; }  // the device class that measured the best
  uint64_t seed() const { return seed_; }                        // the first correct node without parents; 0: none
  double seed_fitness() const { return seed_fitness_; }
  std::vector<CurvePoint> curve() const;  // one point per new best above 0, then the closing one
  std::vector<MixSlice> mix() const;
  std::vector<ClassScore> classes() const;  // ordered by class name, as scores_by_class
  // The fittest correct nodes, fittest first (lowest id on ties): records up to top_records, ids up to fittest.
  std::vector<NodeRecord> top() const;
  std::vector<uint64_t> fittest() const;
  std::vector<uint64_t> latest() const;  // in id order
  // Every node in id order, while the search has at most keep_all; else nullptr.
  const std::vector<NodeRecord>* all() const { return all_overflowed_ ? nullptr : &all_; }

 private:
  DigestLimits limits_;
  int64_t total_ = 0, scored_ = 0;
  NodeCounts counts_;
  std::map<std::string, int64_t> by_status_;
  uint64_t best_ = 0, seed_ = 0;
  double best_fitness_ = 0, seed_fitness_ = 0;
  std::string best_class_;
  std::vector<CurvePoint> curve_;
  std::vector<MixSlice> mix_;
  int64_t slice_size_ = 1, slice_fill_ = 0;  // scored nodes per slice; in the last one
  double curve_best_ = 0;                    // the curve counts fitness above 0 only
  std::map<std::string, ClassScore> classes_;
  mutable std::vector<NodeRecord> top_;                       // trimmed to top_records when it doubles
  mutable std::vector<std::pair<double, uint64_t>> fittest_;  // likewise
  // (fitness, id) of the last kept after the latest trim: a node not fitter can never enter
  std::optional<std::pair<double, uint64_t>> top_floor_, fittest_floor_;
  std::deque<uint64_t> latest_;
  std::vector<NodeRecord> all_;
  bool all_overflowed_ = false;
};

// The digest of nodes already in memory (in id order), every record kept.
SearchDigest digest_of(const std::vector<NodeRecord>& nodes, DigestLimits limits);

}  // namespace kevolve
