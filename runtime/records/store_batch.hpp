// What the store writes in one atomic, synced batch: search records, node records and artifacts.
// Plain records; the store (storage/) and the store actor's protocol both speak them.
#pragma once
#include <cstdint>
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
  void append(const StoreBatch& o) {
    searches.insert(searches.end(), o.searches.begin(), o.searches.end());
    nodes.insert(nodes.end(), o.nodes.begin(), o.nodes.end());
    artifacts.insert(artifacts.end(), o.artifacts.begin(), o.artifacts.end());
  }
};

}  // namespace kevolve
