// Writes bytes straight into a kevolve store's RocksDB, past the Store interface: how tests make the
// damage a crash, a disk error or a foreign writer could leave (a record that does not decode).
#pragma once
#include <cstdint>
#include <string>

namespace kevolve::test {

// The store at `dir` must not be open elsewhere. `family`: searches | nodes | artifacts.
void put_raw(const std::string& dir, const std::string& family, const std::string& key, const std::string& bytes);

// Removes one record, as a repair that could not keep it leaves the store.
void delete_raw(const std::string& dir, const std::string& family, const std::string& key);
// Moves everything the store holds into table (.sst) files, as RocksDB does on its own once a store grows.
void flush_tables(const std::string& dir);

// The key of a node record (as storage/store.cpp lays them out: search id, a 0 byte, the id big-endian).
std::string node_key(const std::string& search, uint64_t id);

}  // namespace kevolve::test
