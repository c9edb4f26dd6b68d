// The store with a real RocksDB in a temporary folder.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/wire.hpp"
#include "storage/store.hpp"
#include "tests/test_support/raw_store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const char* tag) {
  static int n = 0;
  auto d =
      fs::temp_directory_path() / ("kevolve-store-test-" + std::to_string(getpid()) + "-" + tag + std::to_string(n++));
  fs::remove_all(d);
  return d.string();
}

NodeRecord node(uint64_t id, double fitness) {
  NodeRecord n;
  n.id = id;
  n.parents = id > 1 ? std::vector<uint64_t>{1} : std::vector<uint64_t>{};
  n.op = id > 1 ? Operation::mutate : Operation::seed;
  n.params = {{"vec", std::to_string(id)}};
  n.state = NodeState::scored;
  n.status = fitness > 0 ? EvalStatus::ok : EvalStatus::incorrect;
  n.fitness = fitness;
  return n;
}

}  // namespace

TEST_CASE("searches, nodes and artifacts survive a reopen, nodes come back in id order", "[store]") {
  const auto dir = temp_dir("reopen");
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    StoreBatch b;
    SearchRecord r;
    r.id = "s1";
    r.problem = "gelu";
    r.next_node = 300;
    r.rng_state = "1 2 3";
    b.searches.push_back(r);
    for (uint64_t id = 299; id >= 1; --id) b.nodes.push_back({"s1", node(id, id % 3 ? 1.5 : 0)});
    b.nodes.push_back({"s2", node(1, 9)});
    b.artifacts.push_back({"s1", {7, "source", "int main(){}"}});
    REQUIRE((*s)->write(b));
  }
  auto s = Store::open(dir);
  REQUIRE(s);
  auto r = (*s)->search("s1");
  REQUIRE(r);
  CHECK(r->next_node == 300);
  CHECK(r->rng_state == "1 2 3");
  auto nodes = (*s)->nodes("s1");
  REQUIRE(nodes.size() == 299);
  for (size_t i = 0; i < nodes.size(); ++i) CHECK(nodes[i].id == i + 1);
  CHECK(nodes[6].params.at("vec") == "7");
  CHECK(nodes[2].status == EvalStatus::incorrect);  // id 3: fitness 0
  CHECK(nodes[1].status == EvalStatus::ok);
  CHECK((*s)->nodes("s2").size() == 1);
  CHECK(*(*s)->artifact("s1", 7, "source") == "int main(){}");
  CHECK_FALSE((*s)->artifact("s1", 8, "source"));
  CHECK_FALSE((*s)->search("nope"));
  fs::remove_all(dir);
}

TEST_CASE("a search's nodes are read one at a time in either order, only its own, beside searches of similar ids",
          "[store]") {
  const auto dir = temp_dir("each");
  auto s = Store::open(dir);
  REQUIRE(s);
  StoreBatch b;
  // "s" sorts before "s2" and after "r"; ids above 255 and 65535 check the key's byte order.
  for (uint64_t id : {1, 2, 255, 256, 65536, 70000}) b.nodes.push_back({"s", node(id, 1.0)});
  b.nodes.push_back({"s2", node(1, 2.0)});
  b.nodes.push_back({"r", node(99, 3.0)});
  REQUIRE((*s)->write(b));
  std::vector<uint64_t> up, down;
  REQUIRE((*s)->each_node("s", false, [&](NodeRecord& n) { up.push_back(n.id); }));
  REQUIRE((*s)->each_node("s", true, [&](NodeRecord& n) { down.push_back(n.id); }));
  CHECK(up == std::vector<uint64_t>{1, 2, 255, 256, 65536, 70000});
  CHECK(down == std::vector<uint64_t>{70000, 65536, 256, 255, 2, 1});
  std::vector<uint64_t> last;  // the last search of the store, and one that is not there
  REQUIRE((*s)->each_node("s2", true, [&](NodeRecord& n) { last.push_back(n.id); }));
  CHECK(last == std::vector<uint64_t>{1});
  size_t none = 0;
  REQUIRE((*s)->each_node("q", true, [&](NodeRecord&) { ++none; }));
  REQUIRE((*s)->each_node("t", true, [&](NodeRecord&) { ++none; }));
  CHECK(none == 0);
  fs::remove_all(dir);
}

TEST_CASE("a store held by a writer can be read read-only, and a second writer is refused", "[store]") {
  const auto dir = temp_dir("shared");
  auto w = Store::open(dir);
  REQUIRE(w);
  StoreBatch b;
  b.nodes.push_back({"s", node(1, 2)});
  REQUIRE((*w)->write(b));
  auto second = Store::open(dir);
  REQUIRE_FALSE(second);
  CHECK(second.error().find("another kevolve run") != std::string::npos);
  auto r = Store::open(dir, true);
  REQUIRE(r);
  CHECK((*r)->nodes("s").size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint is a complete store of its own", "[store]") {
  const auto dir = temp_dir("ckpt");
  auto s = Store::open(dir);
  REQUIRE(s);
  StoreBatch b;
  for (uint64_t id = 1; id <= 50; ++id) b.nodes.push_back({"s", node(id, 1)});
  REQUIRE((*s)->write(b));
  REQUIRE((*s)->checkpoint(dir + ".ck"));
  auto c = Store::open(dir + ".ck", true);
  REQUIRE(c);
  CHECK((*c)->nodes("s").size() == 50);
  fs::remove_all(dir);
  fs::remove_all(dir + ".ck");
}

TEST_CASE("a corrupt record is skipped, not a crash", "[store]") {
  const auto bad = decode_node("garbage");
  CHECK_FALSE(bad);
  CHECK(bad.code() == Errc::corrupt);
  const auto n = decode_node(encode_node(node(5, 1.25)));
  REQUIRE(n);
  CHECK(n->id == 5);
  CHECK(n->fitness == 1.25);
}

TEST_CASE("a node keeps the device class that measured it, and nodes stored before classes still read", "[store]") {
  NodeRecord n = node(4, 2.5);
  n.device_class = "cuda:sm_90 NVIDIA H200";
  const auto back = decode_node(encode_node(n));
  REQUIRE(back);
  CHECK(back->device_class == "cuda:sm_90 NVIDIA H200");
  CHECK(back->fitness == 2.5);
  // The layout before device classes: the same record without the trailing class string.
  n.device_class.clear();
  const std::string now = encode_node(n);
  const std::string before = now.substr(0, now.size() - 4);
  const auto old = decode_node(before);
  REQUIRE(old);
  CHECK(old->device_class.empty());
  CHECK(old->fitness == 2.5);
  CHECK_FALSE(decode_node(before.substr(0, before.size() - 3)));  // a truncated record is still refused
}

namespace {

// A node as the store laid it out before records were written from their field lists, spelled out field
// by field (with or without the device class, which came later).
std::string old_layout_node(const NodeRecord& n, bool with_device_class) {
  wire::Writer w;
  w.i64(static_cast<int64_t>(n.id));
  w.u32(static_cast<uint32_t>(n.parents.size()));
  for (auto p : n.parents) w.i64(static_cast<int64_t>(p));
  w.str(operation_name(n.op));  // stored by name
  w.u32(static_cast<uint32_t>(n.params.size()));
  for (auto& [k, v] : n.params) {
    w.str(k);
    w.str(v);
  }
  w.u32(static_cast<uint32_t>(n.island));
  w.u32(static_cast<uint32_t>(n.state));
  w.u32(static_cast<uint32_t>(n.status));
  w.str(n.reason);
  w.str(n.message);
  w.f64(n.fitness);
  w.f64(n.candidate_ms);
  w.f64(n.reference_ms);
  if (with_device_class) w.str(n.device_class);
  return std::string(w.bytes().begin(), w.bytes().end());
}

std::string old_layout_search(const SearchRecord& s) {
  wire::Writer w;
  for (auto* f : {&s.id, &s.problem, &s.strategy, &s.config_text, &s.rng_state, &s.stop_reason}) w.str(*f);
  w.i64(static_cast<int64_t>(s.next_node));
  w.u32(s.finished);
  return std::string(w.bytes().begin(), w.bytes().end());
}

}  // namespace

TEST_CASE("records stored in the earlier layout still decode, and new ones begin with it", "[store]") {
  NodeRecord n = node(7, 2.5);
  n.parents = {3, 5};
  n.island = 2;
  n.reason = "r";
  n.message = "m";
  n.candidate_ms = 1.25;
  n.reference_ms = 3.5;
  n.device_class = "cpu:znver3 AMD EPYC";
  auto back = decode_node(old_layout_node(n, true));
  REQUIRE(back);
  CHECK(encode_node(*back) == old_layout_node(n, true));
  CHECK(back->parents == n.parents);
  CHECK(back->params == n.params);
  CHECK(back->device_class == n.device_class);
  CHECK(back->candidate_ms == n.candidate_ms);
  // Before device classes: the field is absent and reads as "".
  const auto before_classes = decode_node(old_layout_node(n, false));
  REQUIRE(before_classes);
  CHECK(before_classes->device_class.empty());
  CHECK(before_classes->reference_ms == n.reference_ms);
  // Anything shorter than that is not a node.
  const std::string full = old_layout_node(n, false);
  CHECK_FALSE(decode_node(full.substr(0, full.size() - 8)));
  CHECK_FALSE(decode_node(full + "x"));
  // Operations are stored by name: a name that is no operation is not a node.
  std::string unknown_op = full;
  const size_t at = unknown_op.find("mutate");
  REQUIRE(at != std::string::npos);
  unknown_op.replace(at, 6, "mutant");
  CHECK_FALSE(decode_node(unknown_op));

  SearchRecord s;
  s.id = "s1";
  s.problem = "gelu";
  s.strategy = "greedy";
  s.config_text = "[search]";
  s.next_node = 42;
  s.rng_state = "123 456";
  s.finished = true;
  s.stop_reason = "evaluation budget";
  const auto read = decode_search(old_layout_search(s));
  REQUIRE(read);
  const SearchRecord& sb = *read;
  // Written again, the earlier layout comes first and the fields added since follow it (a console
  // submission's flag, false for a record from before it).
  CHECK(encode_search(sb).rfind(old_layout_search(s), 0) == 0);
  CHECK_FALSE(sb.submitted);
  SearchRecord submitted = sb;
  submitted.submitted = true;
  const auto back_submitted = decode_search(encode_search(submitted));
  REQUIRE(back_submitted);
  CHECK(back_submitted->submitted);
  CHECK(sb.next_node == 42);
  CHECK(sb.finished);
  CHECK(sb.stop_reason == s.stop_reason);
}

TEST_CASE("an unreadable record is reported as corrupt, never as absent, read in a scan or by its id", "[store]") {
  const auto dir = temp_dir("corrupt");
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    SearchRecord rec;
    rec.id = "good";
    rec.problem = "gelu";
    StoreBatch b;
    b.searches.push_back(rec);
    for (uint64_t i = 1; i <= 3; ++i) b.nodes.push_back({"good", node(i, 1.0)});
    REQUIRE((*s)->write(b));
  }
  test::put_raw(dir, "searches", "broken", "\x01\x02garbage");
  test::put_raw(dir, "nodes", test::node_key("good", 2), "not a node");
  auto s = Store::open(dir, true);
  REQUIRE(s);
  auto missing = (*s)->search("nowhere");
  CHECK_FALSE(missing);
  CHECK(missing.code() == Errc::not_found);
  auto broken = (*s)->search("broken");
  CHECK_FALSE(broken);
  CHECK(broken.code() == Errc::corrupt);
  CHECK(broken.error().find("cannot be decoded") != std::string::npos);
  Status unreadable;
  auto nodes = (*s)->nodes("good", &unreadable);
  CHECK(nodes.size() == 2);
  CHECK(unreadable.code == Errc::corrupt);
  CHECK(unreadable.message.find("node 2") != std::string::npos);
  Status fine;
  (*s)->nodes("nowhere", &fine);
  CHECK(fine.ok());
  // one node by id: found, absent, or corrupt, each said as such
  auto one = (*s)->node("good", 3);
  REQUIRE(one);
  CHECK(one->id == 3);
  CHECK((*s)->node("good", 4).code() == Errc::not_found);
  CHECK((*s)->node("other", 1).code() == Errc::not_found);
  auto bad = (*s)->node("good", 2);
  CHECK(bad.code() == Errc::corrupt);
  CHECK(bad.error().find("node 2 of search 'good'") != std::string::npos);
  fs::remove_all(dir);
}

namespace {

// Writes `n` nodes of search "s" in a child process that then dies without closing the store (as kill -9
// would): the nodes are in the write-ahead log only, not in a table file.
void write_then_die(const std::string& dir, uint64_t n) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto s = Store::open(dir);
    if (!s) _exit(1);
    for (uint64_t i = 1; i <= n; ++i) {
      StoreBatch b;
      NodeRecord r = node(i, 1.0);
      r.message = std::string(300, 'm');
      b.nodes.push_back({"s", r});
      if (!(*s)->write(b)) _exit(2);
    }
    _exit(0);  // no Close(): nothing flushed
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

fs::path largest_with(const std::string& dir, const std::string& extension) {
  fs::path best;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension && (best.empty() || fs::file_size(e.path()) > fs::file_size(best)))
      best = e.path();
  return best;
}

}  // namespace

TEST_CASE("a write-ahead log damaged in the middle is reported at opening, never cut short in silence", "[store]") {
  const std::string dir = temp_dir("wal");
  write_then_die(dir, 200);
  {
    auto s = Store::open(dir, true);  // the log alone holds them, and they are all read back
    REQUIRE(s);
    CHECK((*s)->nodes("s").size() == 200);
  }
  const fs::path wal = largest_with(dir, ".log");
  REQUIRE(!wal.empty());
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(wal) / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto s = Store::open(dir);
  REQUIRE_FALSE(s);
  INFO(s.error());
  CHECK(s.code() == Errc::corrupt);
  CHECK(s.error().find("is damaged") != std::string::npos);
  CHECK(s.error().find("kevolve store repair " + dir) != std::string::npos);
  // Repair drops what is damaged; what it keeps opens again.
  REQUIRE(repair_store(dir).ok());
  auto repaired = Store::open(dir);
  REQUIRE(repaired);
  CHECK((*repaired)->nodes("s").size() < 200);
  fs::remove_all(dir);
}

TEST_CASE("a write that would leave the disk without its reserve is refused, the store left as it was", "[store]") {
  const std::string dir = temp_dir("full");
  auto s = Store::open(dir);
  REQUIRE(s);
  StoreBatch first;
  first.nodes.push_back({"s", node(1, 1.0)});
  REQUIRE((*s)->write(first).ok());
  // A reserve larger than any disk stands for a full one.
  setenv("KEVOLVE_STORE_MIN_FREE_MB", "1000000000", 1);
  StoreBatch second;
  second.nodes.push_back({"s", node(2, 1.0)});
  const Status refused = (*s)->write(second);
  unsetenv("KEVOLVE_STORE_MIN_FREE_MB");
  INFO(refused.text());
  CHECK(refused.code == Errc::io);
  CHECK(refused.message.find("MiB free on its disk") != std::string::npos);
  CHECK(refused.message.find("run the same command to resume") != std::string::npos);
  CHECK((*s)->nodes("s").size() == 1);
  // Once there is room again, the same batch goes through.
  CHECK((*s)->write(second).ok());
  CHECK((*s)->nodes("s").size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("opening a store that is not there for reading says so, and creates nothing", "[store]") {
  const std::string dir = temp_dir("missing");
  auto s = Store::open(dir, true);
  REQUIRE_FALSE(s);
  CHECK(s.code() == Errc::not_found);
  CHECK(s.error().find("no such store") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));
  fs::create_directories(dir);
  auto empty = Store::open(dir, true);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().find("not a kevolve store") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a log cut short or deleted after its writes were confirmed is reported at opening", "[store]") {
  for (const bool deleted : {false, true}) {
    const std::string dir = temp_dir(deleted ? "wal-gone" : "wal-cut");
    write_then_die(dir, 200);
    const fs::path wal = largest_with(dir, ".log");
    REQUIRE(!wal.empty());
    if (deleted)
      fs::remove(wal);
    else
      fs::resize_file(wal, fs::file_size(wal) / 2);  // whole records gone: no torn tail to tolerate
    for (const bool read_only : {true, false}) {
      auto s = Store::open(dir, read_only);
      REQUIRE_FALSE(s);
      INFO(s.error());
      CHECK(s.code() == Errc::corrupt);
      CHECK(s.error().find("lost confirmed writes") != std::string::npos);
      CHECK(s.error().find("kevolve store repair " + dir) != std::string::npos);
    }
    // The repair keeps what is there, says how many confirmed writes are missing, and makes what is there
    // the store's state again.
    RepairReport r;
    REQUIRE(repair_store(dir, &r).ok());
    CHECK(r.confirmed > 0);
    CHECK(r.readable_sequence >= 0);
    CHECK(static_cast<uint64_t>(r.readable_sequence) < r.confirmed);
    auto repaired = Store::open(dir);
    REQUIRE(repaired);
    CHECK((*repaired)->nodes("s").size() < 200);
    fs::remove_all(dir);
  }
}

TEST_CASE("repair salvages the records of a table past its damaged block and of a log past its damage", "[store]") {
  const std::string dir = temp_dir("salvage");
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    for (uint64_t i = 1; i <= 2000; i += 100) {
      StoreBatch b;
      for (uint64_t j = i; j < i + 100; ++j) b.nodes.push_back({"s", node(j, 1.0)});
      REQUIRE((*s)->write(b));
    }
  }  // closed: flushed into a table file
  const fs::path table = largest_with(dir, ".sst");
  REQUIRE(!table.empty());
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(table) / 2));
    const std::string junk(512, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  RepairReport r;
  REQUIRE(repair_store(dir, &r).ok());
  CHECK(r.damaged_regions >= 1);
  auto s = Store::open(dir);
  REQUIRE(s);
  const auto nodes = (*s)->nodes("s");
  CHECK(nodes.size() > 1800);  // RocksDB's repair alone drops the whole table: none
  CHECK(nodes.size() < 2000);
  CHECK(nodes.back().id == 2000);  // the records after the damaged block are kept
  s->reset();
  fs::remove_all(dir);

  const std::string wal_dir = temp_dir("salvage-wal");
  write_then_die(wal_dir, 200);
  const fs::path wal = largest_with(wal_dir, ".log");
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(wal) / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  REQUIRE(repair_store(wal_dir).ok());
  auto w = Store::open(wal_dir);
  REQUIRE(w);
  const auto kept = (*w)->nodes("s");
  CHECK(kept.size() >= 120);  // the log's 32 KiB blocks the garbage touches are lost (RocksDB's repair alone: all)
  CHECK(kept.back().id == 200);
  w->reset();
  fs::remove_all(wal_dir);
}

TEST_CASE("a store whose MANIFEST was lost while its writes were only in the log keeps them through a repair",
          "[store]") {
  for (const bool garbage : {false, true}) {
    const std::string dir = temp_dir(garbage ? "manifest-gone-damaged-log" : "manifest-gone");
    write_then_die(dir, 200);  // killed: the 200 nodes are in the write-ahead log only
    CHECK(fs::exists(fs::path(dir) / "KEVOLVE-FAMILIES"));
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("MANIFEST-", 0) == 0) fs::remove(e.path());
    if (garbage) {  // and 4 KiB of the log damaged: only the batches in the blocks it touches are lost
      const fs::path wal = largest_with(dir, ".log");
      std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(fs::file_size(wal) / 2));
      const std::string junk(4096, '\x5a');
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    REQUIRE_FALSE(Store::open(dir, true));  // RocksDB alone cannot open it
    RepairReport r;
    REQUIRE(repair_store(dir, &r).ok());
    CHECK(r.salvaged >= (garbage ? 120 : 200));
    CHECK(r.readable_sequence >= (garbage ? 120 : 200));
    CHECK((r.damaged_regions > 0) == garbage);
    auto s = Store::open(dir);
    REQUIRE(s);
    const auto nodes = (*s)->nodes("s");
    if (garbage) {
      CHECK(nodes.size() >= 120);
      CHECK(nodes.size() < 200);
    } else {
      REQUIRE(nodes.size() == 200);  // RocksDB's repair alone: none
      CHECK(nodes.front().id == 1);
      CHECK(nodes.back().id == 200);
      CHECK(nodes.back().message == std::string(300, 'm'));
    }
    s->reset();
    fs::remove_all(dir);
  }
}

TEST_CASE("a node's parameters are found by their hash, in a store from before these keys and after a repair too",
          "[store]") {
  const auto dir = temp_dir("params");
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    StoreBatch b;
    for (uint64_t id = 1; id <= 50; ++id) b.nodes.push_back({"s1", node(id, 1.5)});
    REQUIRE((*s)->write(b));
    for (uint64_t id = 1; id <= 50; ++id) CHECK(*(*s)->has_params("s1", params_hash(node(id, 1.5).params)));
    CHECK_FALSE(*(*s)->has_params("s1", params_hash(node(51, 1.5).params)));
    CHECK_FALSE(*(*s)->has_params("s2", params_hash(node(1, 1.5).params)));  // another search's point
  }
  // A store written before the keys existed: nodes without keys, no mark. Its first writer gives them keys.
  test::delete_raw(dir, "default", "kevolve:params-indexed");
  test::put_raw(dir, "nodes", test::node_key("s1", 77), encode_node(node(77, 2.0)));
  {
    auto r = Store::open(dir, /*read_only=*/true);
    REQUIRE(r);
    CHECK_FALSE(*(*r)->has_params("s1", params_hash(node(77, 2.0).params)));  // a reader changes nothing
  }
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    CHECK(*(*s)->has_params("s1", params_hash(node(77, 2.0).params)));
    CHECK(*(*s)->has_params("s1", params_hash(node(3, 1.5).params)));
  }
  // A repair may lose keys with their tables: it removes the mark, and the next writer checks every node again.
  test::put_raw(dir, "nodes", test::node_key("s1", 78), encode_node(node(78, 2.0)));
  REQUIRE(repair_store(dir).ok());
  {
    auto s = Store::open(dir);
    REQUIRE(s);
    CHECK(*(*s)->has_params("s1", params_hash(node(78, 2.0).params)));
  }
  fs::remove_all(dir);
}
