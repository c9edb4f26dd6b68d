// The store with a real RocksDB in a temporary folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "storage/store.hpp"

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
  n.op = id > 1 ? "mutate" : "seed";
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
  NodeRecord n;
  CHECK_FALSE(decode_node("garbage", n));
  CHECK(decode_node(encode_node(node(5, 1.25)), n));
  CHECK(n.id == 5);
  CHECK(n.fitness == 1.25);
}

TEST_CASE("a node keeps the device class that measured it, and nodes stored before classes still read", "[store]") {
  NodeRecord n = node(4, 2.5);
  n.device_class = "cuda:sm_90 NVIDIA H200";
  NodeRecord back;
  REQUIRE(decode_node(encode_node(n), back));
  CHECK(back.device_class == "cuda:sm_90 NVIDIA H200");
  CHECK(back.fitness == 2.5);
  // The layout before device classes: the same record without the trailing class string.
  n.device_class.clear();
  const std::string now = encode_node(n);
  const std::string before = now.substr(0, now.size() - 4);
  NodeRecord old;
  old.device_class = "stale";
  REQUIRE(decode_node(before, old));
  CHECK(old.device_class.empty());
  CHECK(old.fitness == 2.5);
  CHECK_FALSE(decode_node(before.substr(0, before.size() - 3), old));  // a truncated record is still refused
}
