#include "tests/test_support/raw_store.hpp"

#include <memory>
#include <rocksdb/db.h>
#include <stdexcept>
#include <vector>

namespace kevolve::test {

void put_raw(const std::string& dir, const std::string& family, const std::string& key, const std::string& bytes) {
  rocksdb::Options o;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), "searches", "nodes", "artifacts"})
    cfs.emplace_back(name, rocksdb::ColumnFamilyOptions(o));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  auto st = rocksdb::DB::Open(o, dir, cfs, &handles, &db);
  if (!st.ok()) throw std::runtime_error("put_raw: open " + dir + ": " + st.ToString());
  size_t i = 0;
  while (i < cfs.size() && cfs[i].name != family) ++i;
  if (i == cfs.size()) throw std::runtime_error("put_raw: no column family " + family);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  st = db->Put(wo, handles[i], key, bytes);
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
  if (!st.ok()) throw std::runtime_error("put_raw: " + st.ToString());
}

std::string node_key(const std::string& search, uint64_t id) {
  std::string k = search;
  k.push_back('\0');
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((id >> (8 * i)) & 0xff));
  return k;
}

}  // namespace kevolve::test
