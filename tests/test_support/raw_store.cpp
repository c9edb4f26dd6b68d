#include "tests/test_support/raw_store.hpp"

#include <memory>
#include <rocksdb/db.h>
#include <stdexcept>
#include <vector>

namespace kevolve::test {

namespace {

struct Opened {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ~Opened() {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
};

void open_store(const std::string& dir, Opened& s) {
  rocksdb::Options o;
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), "searches", "nodes", "artifacts"})
    s.cfs.emplace_back(name, rocksdb::ColumnFamilyOptions(o));
  auto st = rocksdb::DB::Open(o, dir, s.cfs, &s.handles, &s.db);
  if (!st.ok()) throw std::runtime_error("raw store: open " + dir + ": " + st.ToString());
}

}  // namespace

void flush_tables(const std::string& dir) {
  Opened s;
  open_store(dir, s);
  for (auto* h : s.handles)
    if (auto st = s.db->Flush(rocksdb::FlushOptions(), h); !st.ok())
      throw std::runtime_error("raw store: flush: " + st.ToString());
}

void put_raw(const std::string& dir, const std::string& family, const std::string& key, const std::string& bytes) {
  Opened s;
  open_store(dir, s);
  auto& cfs = s.cfs;
  auto& handles = s.handles;
  auto* db = s.db;
  rocksdb::Status st;
  size_t i = 0;
  while (i < cfs.size() && cfs[i].name != family) ++i;
  if (i == cfs.size()) throw std::runtime_error("put_raw: no column family " + family);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  st = db->Put(wo, handles[i], key, bytes);
  if (!st.ok()) throw std::runtime_error("put_raw: " + st.ToString());
}

void delete_raw(const std::string& dir, const std::string& family, const std::string& key) {
  Opened s;
  open_store(dir, s);
  size_t i = 0;
  while (i < s.cfs.size() && s.cfs[i].name != family) ++i;
  if (i == s.cfs.size()) throw std::runtime_error("delete_raw: no column family " + family);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  auto st = s.db->Delete(wo, s.handles[i], key);
  if (!st.ok()) throw std::runtime_error("delete_raw: " + st.ToString());
}

std::string node_key(const std::string& search, uint64_t id) {
  std::string k = search;
  k.push_back('\0');
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((id >> (8 * i)) & 0xff));
  return k;
}

}  // namespace kevolve::test
