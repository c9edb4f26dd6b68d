// Store: the persistent record of every search — searches, nodes (status, parents, parameters,
// fitness, timings) and artifacts (source, compile log, evaluation report) in RocksDB column families.
// The only header of the project that knows RocksDB exists is store.cpp; callers see plain records.
// Writes go in batches, each synced once (group commit); the write-ahead log stays on.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/expected.hpp"
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

class Store {
 public:
  virtual ~Store() = default;
  // Opens (creating if needed) the store at `path`. read_only opens a store another process may be
  // writing to, and sees it as of the moment of opening.
  static Expected<std::unique_ptr<Store>> open(const std::string& path, bool read_only = false);

  virtual Expected<bool> write(const StoreBatch& b) = 0;
  virtual Expected<SearchRecord> search(const std::string& id) = 0;
  virtual std::vector<SearchRecord> searches() = 0;
  virtual std::vector<NodeRecord> nodes(const std::string& search_id) = 0;
  virtual Expected<std::string> artifact(const std::string& search_id, uint64_t node, const std::string& kind) = 0;
  // A consistent copy of the whole store in `dir` (which must not exist), usable as a store.
  virtual Expected<bool> checkpoint(const std::string& dir) = 0;
};

// Record encodings (also used when records cross processes).
std::string encode_node(const NodeRecord& n);
bool decode_node(const std::string& s, NodeRecord& n);
std::string encode_search(const SearchRecord& s);
bool decode_search(const std::string& b, SearchRecord& s);

}  // namespace kevolve
