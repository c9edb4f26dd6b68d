// Reading RocksDB's write-ahead logs without RocksDB (storage/wal_salvage.hpp). The log format, as RocksDB
// writes it: 32 KiB blocks of records, each with a 7-byte header (masked CRC-32C of type and payload,
// payload length, type) — 11 bytes for the recyclable types, which add the log's number — a logical record
// split across blocks as first / middle / last fragments, and a block's last < 7 bytes left as zeros. A
// logical record is a write batch: its sequence (8 bytes), its count (4), then its operations, which
// rocksdb::WriteBatch reads back from those bytes.
#include "storage/wal_salvage.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include <rocksdb/write_batch.h>

namespace kevolve::rocks {
namespace {

constexpr size_t kBlock = 32768;
enum RecordType : uint8_t {
  kZero = 0,
  kFull = 1,
  kFirst = 2,
  kMiddle = 3,
  kLast = 4,
  kRecyclableFull = 5,
  kRecyclableLast = 8,
  kSetCompression = 9,
};

uint32_t crc32c(const char* p, size_t n, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ static_cast<uint8_t>(p[i])) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

uint32_t le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// Collects a batch's operations on the named families (others, and the default family, are ignored).
class Collect : public rocksdb::WriteBatch::Handler {
 public:
  Collect(const std::map<uint32_t, size_t>& families, uint64_t sequence, std::vector<WalRecord>& out)
      : families_(families), sequence_(sequence), out_(out) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    add(cf, key, value.ToString(), false);
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    add(cf, key, "", true);
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override { return DeleteCF(cf, key); }

 private:
  void add(uint32_t cf, const rocksdb::Slice& key, std::string value, bool deleted) {
    auto f = families_.find(cf);
    if (f == families_.end()) return;
    out_.push_back({f->second, key.ToString(), std::move(value), deleted, sequence_});
  }
  const std::map<uint32_t, size_t>& families_;
  uint64_t sequence_;
  std::vector<WalRecord>& out_;
};

// One log file: every batch whose fragments are whole and whose checksums hold, in order.
void read_log(const std::filesystem::path& file, const std::map<uint32_t, size_t>& families, WalSalvage& s) {
  std::ifstream in(file, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string batch;
  bool in_batch = false;
  auto take = [&](const std::string& rep) {
    if (rep.size() < 12) {
      ++s.damaged;
      return;
    }
    uint64_t seq = 0;
    for (int i = 7; i >= 0; --i) seq = (seq << 8) | static_cast<uint8_t>(rep[static_cast<size_t>(i)]);
    rocksdb::WriteBatch wb(rep);
    Collect c(families, seq, s.records);
    if (auto st = wb.Iterate(&c); !st.ok()) {
      ++s.damaged;
      return;
    }
    ++s.batches;
    s.last_sequence = std::max(s.last_sequence, seq + wb.Count() - (wb.Count() > 0 ? 1 : 0));
  };
  for (size_t block = 0; block < data.size(); block += kBlock) {
    size_t at = block;
    const size_t end = std::min(data.size(), block + kBlock);
    while (at + 7 <= end) {
      const char* h = data.data() + at;
      const uint8_t type = static_cast<uint8_t>(h[6]);
      const size_t length = static_cast<uint8_t>(h[4]) | (static_cast<size_t>(static_cast<uint8_t>(h[5])) << 8);
      if (type == kZero && length == 0) break;  // preallocated space: the rest of the block is empty
      const size_t header = type >= kRecyclableFull && type <= kRecyclableLast ? 11 : 7;
      if (at + header + length > end || unmask(le32(h)) != crc32c(h + 6, header - 6 + length)) {
        ++s.damaged;  // the rest of this block cannot be trusted; a batch in pieces is lost
        in_batch = false;
        batch.clear();
        break;
      }
      const std::string payload(h + header, length);
      at += header + length;
      const uint8_t t = type >= kRecyclableFull && type <= kRecyclableLast ? type - 4 : type;
      if (type == kSetCompression) {
        if (!payload.empty() && payload[0] != 0) {
          s.notes.push_back(file.filename().string() + " is compressed: not read");
          return;
        }
        continue;
      }
      if (t == kFull) {
        if (in_batch) ++s.damaged;
        in_batch = false;
        take(payload);
      } else if (t == kFirst) {
        if (in_batch) ++s.damaged;
        batch = payload;
        in_batch = true;
      } else if (t == kMiddle && in_batch) {
        batch += payload;
      } else if (t == kLast && in_batch) {
        batch += payload;
        in_batch = false;
        take(batch);
        batch.clear();
      } else if (t == kMiddle || t == kLast) {
        ++s.damaged;  // a fragment whose beginning was lost
      }
      // other types (RocksDB's newer metadata records) carry no data of ours
    }
  }
  if (in_batch) ++s.damaged;  // cut short inside a batch
}

}  // namespace

WalSalvage salvage_logs(const std::string& store, const std::map<uint32_t, size_t>& families) {
  WalSalvage s;
  std::vector<std::pair<uint64_t, std::filesystem::path>> logs;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(store, ec)) {
    const auto name = e.path().filename().string();
    if (e.path().extension() != ".log" || name.size() < 5) continue;
    try {
      logs.emplace_back(std::stoull(name.substr(0, name.size() - 4)), e.path());
    } catch (const std::exception&) {
      continue;  // not a numbered log (RocksDB's info LOG files have no .log suffix)
    }
  }
  std::sort(logs.begin(), logs.end());
  for (auto& [number, path] : logs) {
    read_log(path, families, s);
    ++s.logs;
  }
  // Later batches win: apply in sequence order (logs in number order already are, but a stale log left by a
  // crash between a flush and its deletion may repeat older ones).
  std::stable_sort(s.records.begin(), s.records.end(),
                   [](const WalRecord& a, const WalRecord& b) { return a.sequence < b.sequence; });
  return s;
}

}  // namespace kevolve::rocks
