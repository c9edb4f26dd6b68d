// The store's RocksDB layout, shared by store.cpp and store_repair.cpp (inside storage/ only): the options
// every opening and repair uses, the column families in their order, and the keys of nodes and artifacts.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/options.h>

namespace kevolve::rocks {

// Column families, in the order they are opened (their index in the handles).
enum Family : size_t { kDefault = 0, kSearches = 1, kNodes = 2, kArtifacts = 3 };

// `store`: the store's folder; `writer`: the opening writes (a run, a repair). A writer's RocksDB log goes
// to <store>/LOG through kevolve's own logger, which never fails: RocksDB's writes its lines through the
// same file writer as the data, and Debian's 7.8.3 aborts on the next line after one failed on a full disk.
// A reader logs nothing.
rocksdb::Options options(const std::string& store, bool writer);
std::vector<rocksdb::ColumnFamilyDescriptor> families(const rocksdb::Options& o);

// Keys: search id, a 0 byte, the node id big-endian (so a scan returns nodes in id order), [kind].
std::string node_key(const std::string& search, uint64_t id);

// The default family holds a key per parameter point of each search: node_key(search, params_hash), no
// value; and kParamsIndexed once every stored node has its key (a store from before these keys gets them
// at its first opening for writing; a repair removes the mark, so the next writer checks them all again).
inline const char* const kParamsIndexed = "kevolve:params-indexed";

// The sequence number of the last write the store confirmed (synced), kept beside RocksDB's files: a store
// that opens with less lost confirmed writes (a log deleted or cut short), which RocksDB alone does not see
// when the log was still open. 0 when there is no mark (checkpoints, stores written before it existed).
uint64_t read_confirmed(const std::string& store);
void forget_confirmed(const std::string& store);  // after a repair: what is there now is the new truth
// The same mark kept by a writer: the file stays open and each write overwrites the number in place.
class ConfirmedMark {
 public:
  ConfirmedMark() = default;
  ConfirmedMark(const ConfirmedMark&) = delete;
  ConfirmedMark& operator=(const ConfirmedMark&) = delete;
  ~ConfirmedMark();
  void write(const std::string& store, uint64_t sequence);

 private:
  int fd_ = -1;
};

// The column families' ids (KEVOLVE-FAMILIES beside RocksDB's files, written when a store is first opened
// for writing): what a write-ahead log read without the MANIFEST needs (storage/wal_salvage.hpp). Read as
// id -> family index; `recorded` false when the file is missing, and then the ids a new store gets (1, 2, 3).
void write_family_ids(const std::string& store, const std::vector<rocksdb::ColumnFamilyHandle*>& handles);
std::map<uint32_t, size_t> read_family_ids(const std::string& store, bool& recorded);

}  // namespace kevolve::rocks
