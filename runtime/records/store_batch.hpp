// What the store writes in one atomic, synced batch: search records, node records and artifacts.
// Plain records; the store (storage/) and the store actor's protocol both speak them.
#pragma once
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/records/node.hpp"

namespace kevolve {

struct Artifact {
  uint64_t node = 0;
  std::string kind;  // source | compile_log | report | runner_log
  std::string text;
};

struct NodeEntry {
  std::string search;
  NodeRecord node;
  // The node's parameters were written with an earlier write of the same node (a search writes each node
  // when it proposes it and again when it is scored): the store then skips their key (storage/).
  bool params_stored = false;
};

struct ArtifactEntry {
  std::string search;
  Artifact artifact;
};

// One atomic, synced write: search records, node records and artifacts together.
struct StoreBatch {
  std::vector<SearchRecord> searches;
  std::vector<NodeEntry> nodes;
  std::vector<ArtifactEntry> artifacts;
  bool empty() const { return searches.empty() && nodes.empty() && artifacts.empty(); }
  size_t entries() const { return searches.size() + nodes.size() + artifacts.size(); }
  void append(const StoreBatch& o) {
    searches.insert(searches.end(), o.searches.begin(), o.searches.end());
    nodes.insert(nodes.end(), o.nodes.begin(), o.nodes.end());
    artifacts.insert(artifacts.end(), o.artifacts.begin(), o.artifacts.end());
  }
  // The same, taking o's entries (o is left empty): no record is copied.
  void append(StoreBatch&& o) {
    if (empty()) {
      *this = std::move(o);
    } else {
      searches.insert(searches.end(), std::make_move_iterator(o.searches.begin()),
                      std::make_move_iterator(o.searches.end()));
      nodes.insert(nodes.end(), std::make_move_iterator(o.nodes.begin()), std::make_move_iterator(o.nodes.end()));
      artifacts.insert(artifacts.end(), std::make_move_iterator(o.artifacts.begin()),
                       std::make_move_iterator(o.artifacts.end()));
    }
    o = StoreBatch{};
  }
};

}  // namespace kevolve
