// Store: the persistent record of every search — searches, nodes (status, parents, parameters,
// fitness, timings) and artifacts (source, compile log, evaluation report) in RocksDB column families.
// The only header of the project that knows RocksDB exists is store.cpp; callers see plain records.
// Writes go in batches, each synced once (group commit); the write-ahead log stays on.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/node.hpp"
#include "runtime/records/store_batch.hpp"

namespace kevolve {

// What `verify` found: record counts per kind, and every problem named (file, key, what is wrong).
struct StoreCheck {
  int64_t searches = 0, nodes = 0, artifacts = 0;
  std::vector<std::string> problems;
  bool clean() const { return problems.empty(); }
};

class Store {
 public:
  virtual ~Store() = default;
  // Opens (creating if needed) the store at `path`. read_only opens a store another process may be
  // writing to, and sees it as of the moment of opening.
  static Expected<std::unique_ptr<Store>> open(const std::string& path, bool read_only = false);

  // Writes the batch atomically and syncs it (Errc::io when RocksDB refuses).
  virtual Status write(const StoreBatch& b) = 0;
  // Errc::not_found when there is no such search, Errc::corrupt when its record cannot be decoded (a
  // caller must never treat that as "absent": starting over would overwrite the search's nodes).
  virtual Expected<SearchRecord> search(const std::string& id) = 0;
  virtual std::vector<SearchRecord> searches() = 0;
  // The search's nodes that decode; `unreadable` (when given) is set to Errc::corrupt naming how many did
  // not and the first of them, or Errc::io when reading stopped early. Untouched when all were read.
  std::vector<NodeRecord> nodes(const std::string& search_id, Status* unreadable = nullptr);
  // The same nodes one at a time, in id order (newest_first: from the highest id down), without holding them
  // all: `visit` may move from its record. The status is what `nodes` sets in `unreadable` (ok: all read).
  virtual Status each_node(const std::string& search_id, bool newest_first,
                           const std::function<void(NodeRecord&)>& visit) = 0;
  // One node: Errc::not_found when the search has no such node, Errc::corrupt when its record cannot be
  // decoded, Errc::io when it cannot be read.
  virtual Expected<NodeRecord> node(const std::string& search_id, uint64_t id) = 0;
  virtual Expected<std::string> artifact(const std::string& search_id, uint64_t node, const std::string& kind) = 0;
  // Whether one of the search's stored nodes has parameters with this params_hash (runtime/records/node.hpp):
  // every node write also writes that key, so a search's parameter index need not hold its whole history
  // in memory. A store written before these keys existed gets them the first time it is opened for writing.
  virtual Expected<bool> has_params(const std::string& search_id, uint64_t hash) = 0;
  // A consistent copy of the whole store in `dir` (which must not exist), usable as a store.
  virtual Status checkpoint(const std::string& dir) = 0;
  // Reads everything: the checksum of every table file, then every record of every kind, decoded. Reports
  // all it finds instead of stopping at the first problem.
  virtual StoreCheck verify() = 0;
};

// Bytes that must stay free on the store's disk: a write that would go below is refused with Errc::io
// (64 MiB; KEVOLVE_STORE_MIN_FREE_MB overrides, e.g. to rehearse a full disk).
uint64_t min_free_bytes();

// What a repair did besides RocksDB's own: records salvaged before it (read past damaged blocks, from a
// log replayed past its damaged records) and written back after it, damaged regions skipped, notes.
struct RepairReport {
  int64_t salvaged = 0, damaged_regions = 0;
  // The sequence of the last write the store confirmed (0: no mark) and the last one the salvage could
  // read (-1: the store could not be read): the writes between are lost.
  uint64_t confirmed = 0;
  int64_t readable_sequence = -1;
  std::vector<std::string> notes;
};

// Repairs the store at `path` in place (store_repair.cpp): every record that can be read now is salvaged
// (seeking past damaged blocks; a damaged log replayed skipping its damaged records), RocksDB's repair
// rebuilds the MANIFEST from the table files, then the salvaged records are written back and flushed.
// Callers verify() afterwards to see what is left.
Status repair_store(const std::string& path, RepairReport* report = nullptr);

// Record encodings (also used when records cross processes).
std::string encode_node(const NodeRecord& n);
Expected<NodeRecord> decode_node(const std::string& s);  // corrupt when `s` is no node record
std::string encode_search(const SearchRecord& s);
Expected<SearchRecord> decode_search(const std::string& b);  // corrupt when `b` is no search record

}  // namespace kevolve
