#include "storage/store.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/records/field_codec.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "runtime/core/wire.hpp"
#include "storage/rocks_layout.hpp"

namespace kevolve {

// Nodes and searches are stored in the layout of their field lists (runtime/records/fields.hpp).
std::string encode_node(const NodeRecord& n) { return field_codec::encode_record(n); }

namespace {
// A record of kind R decoded from `bytes` (at least `required` fields), or corrupt naming `what`.
template <class R>
Expected<R> decode_as(const std::string& bytes, size_t required, const char* what) {
  R r;
  if (!field_codec::decode_record(bytes, r, required))
    return Expected<R>::failure(Errc::corrupt, std::string("a ") + what + " record of " + std::to_string(bytes.size()) +
                                                   " bytes that cannot be decoded");
  return r;
}
}  // namespace

Expected<NodeRecord> decode_node(const std::string& s) { return decode_as<NodeRecord>(s, kNodeFieldsRequired, "node"); }

std::string encode_search(const SearchRecord& s) { return field_codec::encode_record(s); }

Expected<SearchRecord> decode_search(const std::string& b) {
  return decode_as<SearchRecord>(b, kSearchFieldsRequired, "search");
}

namespace {

using rocks::node_key;

// A key for people: search id, then the node id when the key has one.
std::string printable(const std::string& key) {
  const size_t zero = key.find('\0');
  if (zero == std::string::npos) return "'" + key + "'";
  uint64_t id = 0;
  for (size_t i = zero + 1; i < key.size() && i < zero + 9; ++i) id = (id << 8) | static_cast<uint8_t>(key[i]);
  return "'" + key.substr(0, zero) + "' node " + std::to_string(id) +
         (key.size() > zero + 9 ? " " + key.substr(zero + 9) : "");
}

// The node id of a key made by node_key, its id starting at `at`.
uint64_t node_id_of(const std::string& key, size_t at) {
  uint64_t id = 0;
  for (size_t i = 0; i < 8; ++i) id = (id << 8) | static_cast<uint8_t>(key[at + i]);
  return id;
}

class RocksStore : public Store {
 public:
  ~RocksStore() override {
    // What the log holds goes into table files at a clean close, so a stopped store does not depend on
    // its log and its MANIFEST alone (a repair rebuilds column families from table files only).
    if (db_ && !read_only_ && failed_.ok()) db_->Flush(rocksdb::FlushOptions(), handles_);
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    if (db_) db_->Close();
    delete db_;
  }

  static std::string damaged(const std::string& path, const rocksdb::Status& st) {
    return "store " + path + " is damaged: " + st.ToString() + " (nothing was changed; `kevolve store repair " + path +
           "` recovers what can be read and reports what was lost)";
  }

  static Expected<std::unique_ptr<Store>> open(const std::string& path, bool read_only) {
    using R = Expected<std::unique_ptr<Store>>;
    const auto cfs = rocks::families(rocks::options(path, false));
    if (read_only && !std::filesystem::exists(std::filesystem::path(path) / "CURRENT")) {
      const bool folder = std::filesystem::is_directory(path);
      return R::failure(
          Errc::not_found,
          "store " + path + ": " +
              (folder ? "not a kevolve store (no CURRENT file in the folder; a damaged store? try "
                        "`kevolve store repair " +
                            path + "`)"
                      : "no such store (a folder made by `kevolve run`; the [store] path of its config)"));
    }
    if (!read_only && std::filesystem::is_directory(path)) {
      struct statvfs fs {};
      const bool ro_media = statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY);
      if (ro_media || access(path.c_str(), W_OK) != 0)
        return R::failure(Errc::io, "store " + path + " cannot be written: " +
                                        (ro_media ? "its file system is mounted read-only"
                                                  : std::string("no write permission on the folder")) +
                                        " (`kevolve report` and `kevolve store verify` read it as it is; make it "
                                        "writable, then run the same command to continue)");
    }
    if (!read_only) {
      std::error_code ec;
      std::filesystem::create_directories(
          std::filesystem::path(path).parent_path().empty() ? "." : std::filesystem::path(path).parent_path(), ec);
    }
    // A reader of a live store can miss a memtable flush that happens while it opens (the tables it listed
    // predate it, the log it replays is already gone): its view then lags the confirmed writes for a moment.
    // It opens again a few times before calling the store damaged; a writer has no one to race with.
    std::unique_ptr<RocksStore> s;
    for (int attempt = 0;; ++attempt) {
      const uint64_t confirmed = rocks::read_confirmed(path);  // before opening: a writer may go on
      const rocksdb::Options o = rocks::options(path, !read_only);
      s = std::make_unique<RocksStore>();
      s->path_ = path;
      s->read_only_ = read_only;
      rocksdb::Status st = read_only ? rocksdb::DB::OpenForReadOnly(o, path, cfs, &s->handles_, &s->db_)
                                     : rocksdb::DB::Open(o, path, cfs, &s->handles_, &s->db_);
      if (!st.ok()) {
        s->db_ = nullptr;
        s->handles_.clear();
        const bool locked = st.ToString().find("lock") != std::string::npos;
        if (st.IsCorruption()) return R::failure(Errc::corrupt, damaged(path, st));
        return R::failure(
            locked ? Errc::busy : Errc::io,
            "store " + path + ": " + st.ToString() + (locked ? " (is another kevolve run using this store?)" : ""));
      }
      if (const uint64_t seq = s->db_->GetLatestSequenceNumber(); seq < confirmed) {
        for (auto* h : s->handles_) s->db_->DestroyColumnFamilyHandle(h);
        s->handles_.clear();
        s->read_only_ = true;  // nothing flushed on the way out
        if (read_only && attempt < 5) {
          s.reset();
          std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
          continue;
        }
        return R::failure(Errc::corrupt, "store " + path + " lost confirmed writes: it holds writes up to sequence " +
                                             std::to_string(seq) + " but writes up to " + std::to_string(confirmed) +
                                             " were confirmed (a write-ahead log .log deleted or truncated?); nothing "
                                             "was changed; `kevolve store repair " +
                                             path + "` recovers what can be read and reports what was lost");
      }
      break;
    }
    // A writer goes on only from a store whose every table block reads back: damage in a table a resume
    // would not read (the artifacts of scored nodes) is named here, not found later or never. The cost is
    // one sequential read of the table files.
    if (!read_only)
      if (const rocksdb::Status v = s->db_->VerifyChecksum(); !v.ok()) {
        for (auto* h : s->handles_) s->db_->DestroyColumnFamilyHandle(h);
        s->handles_.clear();
        s->read_only_ = true;  // nothing flushed on the way out
        return R::failure(Errc::corrupt, damaged(path, v));
      }
    if (!read_only) {
      rocks::write_family_ids(path, s->handles_);
      if (auto st = s->index_params(); !st.ok())
        return R::failure(Errc::io, "store " + path + ": writing the parameter keys of its nodes: " + st.ToString());
    }
    return R(std::unique_ptr<Store>(std::move(s)));
  }

  Status write(const StoreBatch& b) override {
    if (Status room = enough_room(); !room.ok()) return room;
    // The batch's entries go in by family and key: each memtable then takes its keys in order and finds the
    // next one's place from the last (RocksDB's insert hint), instead of searching its skip list from the top
    // for every key. A search record written by several commits of the batch goes in once, the latest (the
    // batch is atomic: the earlier ones would never be seen).
    struct Put {
      size_t family;
      std::string key, value;
      const std::string* text;  // the value when it is an artifact's text (not copied)
    };
    std::vector<Put> puts;
    puts.reserve(b.searches.size() + 2 * b.nodes.size() + b.artifacts.size());
    for (size_t i = 0; i < b.searches.size(); ++i) {
      bool later = false;
      for (size_t j = i + 1; j < b.searches.size() && !later; ++j) later = b.searches[j].id == b.searches[i].id;
      if (!later) puts.push_back({1, b.searches[i].id, encode_search(b.searches[i]), nullptr});
    }
    for (auto& e : b.nodes) {
      puts.push_back({2, node_key(e.search, e.node.id), encode_node(e.node), nullptr});
      if (!e.params_stored) puts.push_back({0, node_key(e.search, params_hash(e.node.params)), {}, nullptr});
    }
    for (auto& e : b.artifacts)
      puts.push_back({3, node_key(e.search, e.artifact.node) + e.artifact.kind, {}, &e.artifact.text});
    std::stable_sort(puts.begin(), puts.end(), [](const Put& x, const Put& y) {
      return x.family != y.family ? x.family < y.family : x.key < y.key;
    });
    size_t bytes = 12;  // the batch's header, then each entry's tag, family, lengths, key and value
    for (auto& p : puts) bytes += 16 + p.key.size() + (p.text ? p.text->size() : p.value.size());
    rocksdb::WriteBatch wb(bytes);  // one allocation, not a doubling string copied as it grows
    for (auto& p : puts) wb.Put(cf(p.family), p.key, p.text ? rocksdb::Slice(*p.text) : rocksdb::Slice(p.value));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (!failed_.ok()) return failed_;
    auto st = db_->Write(wo, &wb);
    if (!st.ok()) {
      // Fail-stop: after a failed write (a full disk: the reserve was not enough) RocksDB is asked to write
      // nothing more, nor to flush at close. The log holds every confirmed write; the same command resumes
      // once space is freed. (Debian's RocksDB 7.8.3 aborted on the info-log line after a failed one: the
      // store logs through its own writer, see options(); docs/benchmarks/durability.md.)
      std::error_code ec;
      const auto space = std::filesystem::space(path_, ec);
      const std::string free = ec ? "" : std::to_string(space.available >> 20) + " MiB free on its disk now; ";
      const std::string need = min_free_bytes() > 0 ? "free at least " + std::to_string(min_free_bytes() >> 20) + " MiB"
                                                    : std::string("free space");
      failed_ =
          Status::failure(Errc::io, "store " + path_ + ": a write failed (" + st.ToString() +
                                        "); nothing more is written; " + free + need + ", then run the same command");
      return failed_;
    }
    confirmed_.write(path_, db_->GetLatestSequenceNumber());
    return Status::success();
  }

  Expected<SearchRecord> search(const std::string& id) override {
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cf(1), id, &v);
    if (st.IsNotFound()) return Expected<SearchRecord>::failure(Errc::not_found, "no search '" + id + "' in the store");
    if (!st.ok()) return Expected<SearchRecord>::failure(Errc::io, "search '" + id + "': " + st.ToString());
    auto s = decode_search(v);
    if (!s)
      return Expected<SearchRecord>::failure(
          Errc::corrupt, "search '" + id + "': its record (" + std::to_string(v.size()) + " bytes) cannot be decoded");
    return s;
  }

  std::vector<SearchRecord> searches() override {
    std::vector<SearchRecord> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(1)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (auto s = decode_search(it->value().ToString())) out.push_back(std::move(*s));
    }
    return out;
  }

  Status each_node(const std::string& search_id, bool newest_first,
                   const std::function<void(NodeRecord&)>& visit) override {
    size_t bad = 0;
    std::string first_bad;
    std::string prefix = search_id;
    prefix.push_back('\0');
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(2)));
    const auto step = [&] { newest_first ? it->Prev() : it->Next(); };
    if (newest_first) {
      std::string past = search_id;
      past.push_back('\1');  // above every key of the prefix, below every key of the next search id
      it->SeekForPrev(past);
      if (it->Valid() && it->key() == rocksdb::Slice(past)) it->Prev();  // a search named "<id>\1..."
    } else {
      it->Seek(prefix);
    }
    for (; it->Valid() && it->key().starts_with(prefix); step()) {
      if (auto n = decode_node(it->value().ToString())) {
        visit(*n);
      } else if (bad++ == 0) {
        const std::string key = it->key().ToString();
        first_bad = key.size() >= prefix.size() + 8 ? std::to_string(node_id_of(key, prefix.size())) : "?";
      }
    }
    if (!it->status().ok())
      return Status::failure(Errc::io, "nodes of search '" + search_id + "': " + it->status().ToString());
    if (bad > 0)
      return Status::failure(Errc::corrupt, std::to_string(bad) + " node record(s) of search '" + search_id +
                                                "' cannot be decoded (the first: node " + first_bad + ")");
    return {};
  }

  Expected<NodeRecord> node(const std::string& search_id, uint64_t id) override {
    using R = Expected<NodeRecord>;
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cf(2), node_key(search_id, id), &v);
    const std::string what = "node " + std::to_string(id) + " of search '" + search_id + "'";
    if (st.IsNotFound()) return R::failure(Errc::not_found, "no " + what + " in the store");
    if (!st.ok()) return R::failure(Errc::io, what + ": " + st.ToString());
    auto n = decode_node(v);
    if (!n)
      return R::failure(Errc::corrupt,
                        what + ": its record (" + std::to_string(v.size()) + " bytes) cannot be decoded");
    return n;
  }

  Expected<std::string> artifact(const std::string& search_id, uint64_t node, const std::string& kind) override {
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cf(3), node_key(search_id, node) + kind, &v);
    if (st.IsNotFound())
      return Expected<std::string>::failure(Errc::not_found, "no " + kind + " for node " + std::to_string(node));
    if (!st.ok())
      return Expected<std::string>::failure(Errc::io, kind + " of node " + std::to_string(node) + ": " + st.ToString());
    return v;
  }

  Expected<bool> has_params(const std::string& search_id, uint64_t hash) override {
    rocksdb::PinnableSlice v;
    auto st = db_->Get(rocksdb::ReadOptions(), cf(0), node_key(search_id, hash), &v);
    if (st.IsNotFound()) return false;
    if (!st.ok())
      return Expected<bool>::failure(Errc::io, "parameter keys of search '" + search_id + "': " + st.ToString());
    return true;
  }

  StoreCheck verify() override {
    StoreCheck c;
    if (auto st = db_->VerifyChecksum(); !st.ok()) c.problems.push_back("table checksums: " + st.ToString());
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    const char* kinds[] = {"", "search", "node", "artifact"};
    for (size_t f = 1; f <= 3; ++f) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(f)));
      int64_t bad = 0;
      std::string first_bad;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        const std::string key = it->key().ToString(), value = it->value().ToString();
        bool ok = true;
        if (f == 1) {
          ok = static_cast<bool>(decode_search(value));
          ++c.searches;
        } else if (f == 2) {
          ok = static_cast<bool>(decode_node(value));
          ++c.nodes;
        } else {
          ++c.artifacts;
        }
        if (!ok && bad++ == 0) first_bad = printable(key);
      }
      if (bad > 0)
        c.problems.push_back(std::to_string(bad) + " " + kinds[f] + " record(s) cannot be decoded (the first: key " +
                             first_bad + ")");
      if (!it->status().ok())
        c.problems.push_back(std::string("reading the ") + kinds[f] +
                             " records stopped early: " + it->status().ToString());
    }
    return c;
  }

  Status checkpoint(const std::string& dir) override {
    rocksdb::Checkpoint* cp = nullptr;
    auto st = rocksdb::Checkpoint::Create(db_, &cp);
    if (st.ok()) st = cp->CreateCheckpoint(dir);
    delete cp;
    if (!st.ok()) return Status::failure(Errc::io, "checkpoint " + dir + ": " + st.ToString());
    return Status::success();
  }

 private:
  // Gives every stored node its parameter key (rocks_layout.hpp), unless the store is marked as done: a
  // store from before these keys, or one repaired since. One pass over the nodes, in batches.
  rocksdb::Status index_params() {
    std::string mark;
    auto st = db_->Get(rocksdb::ReadOptions(), cf(0), rocks::kParamsIndexed, &mark);
    if (st.ok() || !st.IsNotFound()) return st;
    st = rocksdb::Status::OK();
    rocksdb::WriteBatch wb;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(2)));
    for (it->SeekToFirst(); it->Valid() && st.ok(); it->Next()) {
      const rocksdb::Slice key = it->key();
      if (key.size() < 9) continue;  // verify() names these
      const auto n = decode_node(it->value().ToString());
      if (!n) continue;
      wb.Put(cf(0), node_key(std::string(key.data(), key.size() - 9), params_hash(n->params)), rocksdb::Slice());
      if (wb.GetDataSize() > (4u << 20)) {
        st = db_->Write(rocksdb::WriteOptions(), &wb);
        wb.Clear();
      }
    }
    if (st.ok()) st = it->status();
    if (!st.ok()) return st;
    wb.Put(cf(0), rocks::kParamsIndexed, "1");
    rocksdb::WriteOptions wo;
    wo.sync = true;
    return db_->Write(wo, &wb);
  }

  // Writes stop, with a message, before the disk is full: RocksDB may abort on a failed write, and a
  // batch refused here leaves the store as it was (the same command resumes once space is freed).
  Status enough_room() const {
    std::error_code ec;
    const auto space = std::filesystem::space(path_, ec);
    if (ec) return Status::success();  // no figure: RocksDB's own errors decide
    const uint64_t need = min_free_bytes();
    if (space.available >= need) return Status::success();
    return Status::failure(Errc::io, "store " + path_ + ": only " + std::to_string(space.available >> 20) +
                                         " MiB free on its disk, below the " + std::to_string(need >> 20) +
                                         " MiB kept in reserve; free space, then run the same command to resume");
  }

  rocksdb::ColumnFamilyHandle* cf(size_t i) { return handles_[i]; }
  std::string path_;
  bool read_only_ = false;
  Status failed_;  // the first failed write, after which none is tried
  rocks::ConfirmedMark confirmed_;
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace

Expected<std::unique_ptr<Store>> Store::open(const std::string& path, bool read_only) {
  return RocksStore::open(path, read_only);
}

std::vector<NodeRecord> Store::nodes(const std::string& search_id, Status* unreadable) {
  std::vector<NodeRecord> out;
  Status st = each_node(search_id, false, [&](NodeRecord& n) { out.push_back(std::move(n)); });
  if (!st && unreadable) *unreadable = st;
  return out;
}

uint64_t min_free_bytes() {
  if (const char* v = std::getenv("KEVOLVE_STORE_MIN_FREE_MB"); v && *v) return std::strtoull(v, nullptr, 10) << 20;
  return uint64_t{64} << 20;
}

namespace rocks {

namespace {

// RocksDB's info log as plain appends to a FILE: a failed write loses that line and nothing else.
class StoreLog : public rocksdb::Logger {
 public:
  explicit StoreLog(std::FILE* f) : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), f_(f) {}
  ~StoreLog() override {
    if (f_) std::fclose(f_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (!f_) return;
    std::vfprintf(f_, format, ap);
    std::fputc('\n', f_);
    std::fflush(f_);
    std::clearerr(f_);  // a full disk loses this line; the next one is tried again
  }

 private:
  std::FILE* f_;
};

std::shared_ptr<rocksdb::Logger> store_log(const std::string& store, bool writer) {
  if (!writer) return std::make_shared<StoreLog>(nullptr);
  std::error_code ec;
  std::filesystem::create_directories(store, ec);
  const std::string file = store + "/LOG";
  if (const auto size = std::filesystem::file_size(file, ec); !ec && size > (uint64_t{16} << 20))
    std::filesystem::rename(file, file + ".old", ec);  // one older log kept, at most 16 MiB each
  return std::make_shared<StoreLog>(std::fopen(file.c_str(), "ae"));
}

}  // namespace

// One set of options for opening and repairing. A damaged write-ahead log is an error at opening, never
// a silent cut: only a record torn by a crash in the middle of its write (the last one) is dropped. Logs
// are tracked in the MANIFEST, so a log that was synced and then went missing or shrank is an error too.
rocksdb::Options options(const std::string& store, bool writer) {
  rocksdb::Options o;
  o.info_log = store_log(store, writer);
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.IncreaseParallelism(2);
  o.paranoid_checks = true;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  o.track_and_verify_wals_in_manifest = true;
  // Memtables bounded whatever the search's length: 16 MiB per column family, 48 MiB for all together
  // (RocksDB's defaults, 64 MiB per family and two while one flushes, held up to ~380 MiB).
  o.write_buffer_size = 16 << 20;
  o.db_write_buffer_size = 48 << 20;
  // Index and filter blocks live in one 32 MiB block cache instead of beside every open table file, so the
  // memory of a long search's growing store stays bounded.
  static const std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(32 << 20);
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor> families(const rocksdb::Options& o) {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), "searches", "nodes", "artifacts"})
    cfs.emplace_back(name, rocksdb::ColumnFamilyOptions(o));
  // The parameter keys are looked up one by one, mostly for points no node has: a bloom filter (10 bits a
  // key, in the same capped block cache) answers most of those without reading a data block. Filters and
  // indexes are partitioned (4 KiB pieces under a small pinned top level): a lookup loads one piece, not a
  // table file's whole filter, so the capped cache serves a store of any size.
  rocksdb::BlockBasedTableOptions t = *o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  t.index_type = rocksdb::BlockBasedTableOptions::IndexType::kTwoLevelIndexSearch;
  t.partition_filters = true;
  t.metadata_block_size = 4096;
  t.pin_top_level_index_and_filter = true;
  cfs[kDefault].options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  cfs[kDefault].options.memtable_whole_key_filtering = true;  // and one over the memtable's keys (2 % of it)
  cfs[kDefault].options.memtable_prefix_bloom_size_ratio = 0.02;
  return cfs;
}

std::string node_key(const std::string& search, uint64_t id) {
  std::string k = search;
  k.push_back('\0');
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((id >> (8 * i)) & 0xff));
  return k;
}

// The confirmed-writes mark: a file beside RocksDB's, rewritten (renamed into place) after each synced
// write. Not synced itself: after a power cut it may lag, never lead, the log it describes.
std::string confirmed_path(const std::string& store) { return store + "/KEVOLVE-CONFIRMED"; }

uint64_t read_confirmed(const std::string& store) {
  std::ifstream in(confirmed_path(store));
  uint64_t v = 0;
  return in >> v ? v : 0;
}

ConfirmedMark::~ConfirmedMark() {
  if (fd_ >= 0) close(fd_);
}

// The number in place, at a fixed width (20 digits and a newline, what read_confirmed reads): one pwrite into
// the open file per write, not a new file and a rename. A reader that catches it half-written sees a number
// that is too large or too small; either way it opens again (Store::open) or reports what it read.
void ConfirmedMark::write(const std::string& store, uint64_t sequence) {
  if (fd_ < 0) fd_ = ::open(confirmed_path(store).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // no mark: a later check sees an older one, never a false alarm
  char line[32];
  const int n = std::snprintf(line, sizeof line, "%020llu\n", static_cast<unsigned long long>(sequence));
  if (pwrite(fd_, line, static_cast<size_t>(n), 0) != n) {
    close(fd_);
    fd_ = -1;
  }
}

void forget_confirmed(const std::string& store) {
  std::error_code ec;
  std::filesystem::remove(confirmed_path(store), ec);
}

// The column families' ids, one "index id" line each: the ids a log names its writes by, which otherwise
// only the MANIFEST knows. Written once per store (ids never change).
std::string family_ids_path(const std::string& store) { return store + "/KEVOLVE-FAMILIES"; }

void write_family_ids(const std::string& store, const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  if (std::filesystem::exists(family_ids_path(store))) return;
  const std::string tmp = family_ids_path(store) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (size_t f = 0; f < handles.size(); ++f) out << f << " " << handles[f]->GetID() << "\n";
    if (!out) return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, family_ids_path(store), ec);
}

std::map<uint32_t, size_t> read_family_ids(const std::string& store, bool& recorded) {
  std::map<uint32_t, size_t> ids;
  std::ifstream in(family_ids_path(store));
  size_t f = 0;
  uint32_t id = 0;
  while (in >> f >> id)
    if (f > kDefault && f <= kArtifacts) ids[id] = f;
  recorded = ids.size() == kArtifacts;
  if (!recorded) ids = {{1, kSearches}, {2, kNodes}, {3, kArtifacts}};  // the order a new store creates them in
  return ids;
}

}  // namespace rocks

}  // namespace kevolve
