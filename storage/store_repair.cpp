// kevolve store repair (storage/store.hpp: repair_store): salvage what can be read, RocksDB's repair, then
// the salvaged records written back. RocksDB's repair alone drops a whole table file for one bad block, and
// the records of a log whose column families it cannot see; the salvage keeps them.
#include <filesystem>
#include <memory>
#include <tuple>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "storage/rocks_layout.hpp"
#include "storage/store.hpp"
#include "storage/wal_salvage.hpp"

namespace kevolve {
namespace {

using Records = std::vector<std::tuple<size_t, std::string, std::string>>;  // family, key, value

// After a read error past `last` (a node or artifact key), seeks the next node ids of the same search one
// by one — a damaged block holds a few dozen records — then past the search's keys. True when the
// iterator stands on readable data again (or at the end).
bool skip_damage(rocksdb::Iterator& it, const std::string& last) {
  const size_t zero = last.find('\0');
  if (zero == std::string::npos || last.size() < zero + 9) return false;
  const std::string search = last.substr(0, zero);
  uint64_t id = 0;
  for (size_t i = zero + 1; i < zero + 9; ++i) id = (id << 8) | static_cast<uint8_t>(last[i]);
  for (uint64_t k = 1; k <= 4096; ++k) {
    it.Seek(rocks::node_key(search, id + k));
    if (it.status().ok()) return true;
  }
  it.Seek(search + '\x01');  // past every key of this search
  return it.status().ok();
}

// Every record of family `f` that can be read, into `out`; how many damaged regions were skipped.
int64_t salvage_family(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* h, size_t f, Records& out, bool& complete) {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, h));
  std::string last;
  int64_t damaged = 0;
  it->SeekToFirst();
  while (true) {
    for (; it->Valid(); it->Next()) {
      last = it->key().ToString();
      out.emplace_back(f, last, it->value().ToString());
    }
    if (it->status().ok()) return damaged;
    ++damaged;
    if (f == rocks::kSearches || !skip_damage(*it, last)) {
      complete = false;
      return damaged;
    }
  }
}

// Opens the store read-only, replaying its log with `mode`, and salvages every family.
rocksdb::Status salvage(const std::string& path, rocksdb::WALRecoveryMode mode, Records& out, RepairReport& r) {
  rocksdb::Options o = rocks::options(path, false);
  o.wal_recovery_mode = mode;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  auto st = rocksdb::DB::OpenForReadOnly(o, path, rocks::families(o), &handles, &db);
  if (!st.ok()) return st;
  r.readable_sequence = static_cast<int64_t>(db->GetLatestSequenceNumber());
  bool complete = true;
  for (size_t f = rocks::kSearches; f <= rocks::kArtifacts; ++f)
    r.damaged_regions += salvage_family(db, handles[f], f, out, complete);
  if (!complete) r.notes.push_back("some damaged regions could not be skipped: the records after them are lost");
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
  return st;
}

}  // namespace

Status repair_store(const std::string& path, RepairReport* report) {
  RepairReport local;
  RepairReport& r = report ? *report : local;
  if (!std::filesystem::is_directory(path))
    return Status::failure(Errc::not_found, "store " + path + ": no such folder");
  r.confirmed = rocks::read_confirmed(path);
  // 1. Salvage: the records readable now; with a damaged log, its records before and after the damage.
  Records saved;
  auto st = salvage(path, rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords, saved, r);
  if (!st.ok()) {
    saved.clear();
    if (auto st2 = salvage(path, rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords, saved, r); st2.ok())
      r.notes.push_back("the log was replayed skipping its damaged records (" + st.ToString() + ")");
    else
      r.notes.push_back("RocksDB could not open the store to salvage it: " + st2.ToString());
  }
  r.salvaged = static_cast<int64_t>(saved.size());
  // Without a MANIFEST RocksDB can neither open the store nor replay its logs into our column families
  // (RepairDB drops their records): the logs are read here, the writes of a killed run kept.
  rocks::WalSalvage logs;
  if (r.readable_sequence < 0) {
    bool recorded = false;
    const auto ids = rocks::read_family_ids(path, recorded);
    logs = rocks::salvage_logs(path, ids);
    r.salvaged += static_cast<int64_t>(logs.records.size());
    r.damaged_regions += logs.damaged;
    r.readable_sequence = static_cast<int64_t>(logs.last_sequence);
    r.notes.push_back("read " + std::to_string(logs.batches) + " write batches from " + std::to_string(logs.logs) +
                      " write-ahead log(s) directly" +
                      (logs.damaged ? " (" + std::to_string(logs.damaged) + " damaged records skipped)" : "") +
                      (recorded ? ""
                                : "; the column families' ids were not recorded beside the store, the ids a "
                                  "new store gets were assumed"));
    for (auto& n : logs.notes) r.notes.push_back(n);
  }
  // 2. RocksDB's repair: a new MANIFEST from the table files that can be read, logs turned into tables.
  const rocksdb::Options o = rocks::options(path, true);
  st = rocksdb::RepairDB(path, o, rocks::families(o));
  if (!st.ok()) return Status::failure(Errc::io, "repair of " + path + ": " + st.ToString());
  // 3. The salvaged records written back (the column families created where the repair lost them).
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  st = rocksdb::DB::Open(o, path, rocks::families(o), &handles, &db);
  if (!st.ok())
    return Status::failure(Errc::io, "repair of " + path + ": reopening after the repair: " + st.ToString());
  rocksdb::WriteBatch wb;
  for (auto& [f, k, v] : saved) {
    wb.Put(handles[f], k, v);
    if (wb.GetDataSize() > (8u << 20) && st.ok()) {
      st = db->Write(rocksdb::WriteOptions(), &wb);
      wb.Clear();
    }
  }
  if (st.ok()) st = db->Write(rocksdb::WriteOptions(), &wb);
  // The logs' writes after what the tables hold (RepairDB kept the table files): in their order, the last
  // write of a key winning. A log left behind by a crash between a flush and its deletion repeats writes the
  // tables already hold; they are written again with the values they had then.
  wb.Clear();
  for (auto& w : logs.records) {
    if (!st.ok()) break;
    if (w.deleted)
      wb.Delete(handles[w.family], w.key);
    else
      wb.Put(handles[w.family], w.key, w.value);
    if (wb.GetDataSize() > (8u << 20)) {
      st = db->Write(rocksdb::WriteOptions(), &wb);
      wb.Clear();
    }
  }
  // The parameter keys may have lost some of their nodes' keys: the next writer gives every node its key again.
  wb.Delete(handles[rocks::kDefault], rocks::kParamsIndexed);
  if (st.ok()) st = db->Write(rocksdb::WriteOptions(), &wb);
  if (st.ok()) st = db->Flush(rocksdb::FlushOptions(), handles);
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
  if (!st.ok())
    return Status::failure(Errc::io, "repair of " + path + ": writing the salvaged records: " + st.ToString());
  rocks::forget_confirmed(path);
  return Status::success();
}

}  // namespace kevolve
