// Salvage from RocksDB's write-ahead logs when RocksDB itself cannot open the store (its MANIFEST or CURRENT
// lost): the logs are read directly (storage/wal_salvage.cpp) and their batches' operations on kevolve's
// column families returned, so that `kevolve store repair` keeps the writes of a killed run that were only
// in the log. Inside storage/ only.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kevolve::rocks {

struct WalRecord {
  size_t family = 0;  // the index in rocks::families (kSearches, kNodes, kArtifacts)
  std::string key, value;
  bool deleted = false;
  uint64_t sequence = 0;  // the batch's sequence number
};

struct WalSalvage {
  std::vector<WalRecord> records;  // in sequence order: apply in order, the last write of a key wins
  int64_t logs = 0, batches = 0;
  int64_t damaged = 0;  // records or blocks skipped: a checksum that did not hold, a batch cut short
  uint64_t last_sequence = 0;
  std::vector<std::string> notes;
};

// Every readable batch of every numbered log in `store`. `families` maps a column family's id (as the log
// names it) to its index in rocks::families.
WalSalvage salvage_logs(const std::string& store, const std::map<uint32_t, size_t>& families);

}  // namespace kevolve::rocks
