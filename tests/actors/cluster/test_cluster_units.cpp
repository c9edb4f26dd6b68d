// The pure pieces of the cluster: the links' mutual proofs, the frames' codec, and the console's commands
// over a real RocksDB store.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <unistd.h>

#include "runtime/views/console_service.hpp"
#include "runtime/net/cluster_frames.hpp"
#include "runtime/net/peer_proof.hpp"
#include "runtime/views/search_view.hpp"
#include "runtime/core/host_port.hpp"
#include "tests/test_support/raw_store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

TEST_CASE("a proof holds only for the same key, side, role, both nonces and channel binding", "[cluster]") {
  const std::string nn = net::make_nonce(), pn = net::make_nonce();
  CHECK(nn.size() == 32);
  CHECK(nn != pn);
  const std::string key = "s3cret-s3cret-s3cret";
  const std::string mac = net::proof(key, "peer", "evaluator", nn, pn, "binding");
  CHECK(net::proof_ok(mac, key, "peer", "evaluator", nn, pn, "binding"));
  CHECK_FALSE(net::proof_ok(mac, "s3cret-s3cret-s3creT", "peer", "evaluator", nn, pn, "binding"));
  CHECK_FALSE(net::proof_ok(mac, key, "node", "evaluator", nn, pn, "binding"));  // the node cannot echo it back
  CHECK_FALSE(net::proof_ok(mac, key, "peer", "console", nn, pn, "binding"));
  CHECK_FALSE(net::proof_ok(mac, key, "peer", "evaluator", net::make_nonce(), pn, "binding"));
  CHECK_FALSE(net::proof_ok(mac, key, "peer", "evaluator", nn, net::make_nonce(), "binding"));
  CHECK_FALSE(net::proof_ok(mac, key, "peer", "evaluator", nn, pn, "another TLS session"));
  CHECK_FALSE(net::proof_ok(mac.substr(1), key, "peer", "evaluator", nn, pn, "binding"));
}

TEST_CASE("cluster frames decode to what was encoded, and damaged ones to an error", "[cluster]") {
  cluster::EvalFrame e;
  e.index = 3;
  e.job = 77;
  e.eval.search = "s";
  e.eval.node = 12;
  e.eval.files["candidate.so"] = std::string(1000, 'x');
  e.eval.candidate.source = "int main(){}";
  e.eval.build.verdict.message = "m";
  const std::string bytes = cluster::encode(e);
  auto back = cluster::decode_eval(bytes);
  REQUIRE(back);
  CHECK(back->index == 3);
  CHECK(back->job == 77);
  CHECK(back->eval.files.at("candidate.so").size() == 1000);
  CHECK(back->eval.candidate.source == "int main(){}");
  CHECK(back->eval.build.verdict.message == "m");
  CHECK_FALSE(cluster::decode_eval(bytes.substr(0, bytes.size() - 1)));
  CHECK_FALSE(cluster::decode_eval(bytes + "!"));
  // A word count far beyond the frame allocates nothing and is refused.
  std::string ask = cluster::encode(cluster::AskFrame{1, {"searches"}});
  ask[8] = ask[9] = ask[10] = ask[11] = '\xff';
  CHECK_FALSE(cluster::decode_ask(ask));
  auto ok = cluster::decode_ask(cluster::encode(cluster::AskFrame{9, {"show", "x"}}));
  REQUIRE(ok);
  CHECK(ok->words == std::vector<std::string>{"show", "x"});
}

TEST_CASE("addresses are HOST:PORT and errors say so", "[cluster]") {
  auto a = parse_host_port("10.1.2.3:7411");
  REQUIRE(a);
  CHECK(a->first == "10.1.2.3");
  CHECK(a->second == 7411);
  for (const char* bad : {"7411", "host:", ":7411", "host:70000", "host:12x", "host:0"}) {
    auto b = parse_host_port(bad);
    REQUIRE_FALSE(b);
    CHECK(b.error().find("expected HOST:PORT") != std::string::npos);
  }
}

TEST_CASE("console commands answer from the store and the live view", "[cluster]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-console-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  auto st = Store::open(dir);
  REQUIRE(st);
  std::shared_ptr<Store> store = std::move(*st);
  StoreBatch b;
  SearchRecord r;
  r.id = "s1";
  r.problem = "gelu";
  r.strategy = "greedy";
  b.searches.push_back(r);
  for (uint64_t i = 1; i <= 4; ++i) {
    NodeRecord n;
    n.id = i;
    if (i > 1) n.parents = {1};
    n.op = i == 1 ? Operation::seed : Operation::mutate;
    n.state = i == 4 ? NodeState::proposed : NodeState::scored;
    n.status = i == 3 ? EvalStatus::incorrect : EvalStatus::ok;
    n.fitness = i == 3 ? 0 : static_cast<double>(i);
    b.nodes.push_back({"s1", n});
  }
  b.artifacts.push_back({"s1", Artifact{2, "source", "void kernel_2() {}"}});
  REQUIRE(store->write(b));

  cluster::ClusterView v;
  v.store = store;
  cluster::DeviceRow d;
  d.info.host = "gpu7";
  d.info.backend = "cuda";
  d.busy = true;
  d.current = "s1 node 4";
  d.busy_s = 9;
  d.joined_s = 10;
  d.busy_while_queued_s = 9;
  d.queued_s = 9.5;
  v.devices.push_back(d);
  v.queued = 3;

  const std::string s = cluster::console_command({"searches"}, v);
  CHECK(s.find("s1  gelu  stopped  evaluated 3 (correct 2, failed 1)  in flight 1  best 2.000x (node 2)") !=
        std::string::npos);
  CHECK(cluster::console_command({"searches", "--json"}, v).find("\"best_node\":2") != std::string::npos);
  // No torch.compile figure was measured for the best node: said as null, never as a number.
  CHECK(cluster::console_command({"searches", "--json"}, v).find("\"best_vs_compile\":null") != std::string::npos);
  StoreBatch timed;
  timed.artifacts.push_back({"s1", Artifact{2, "timing", "{\"candidate\":{},\"compile_speedup\":1.75,\"gbps\":0}"}});
  REQUIRE(store->write(timed));
  CHECK(cluster::console_command({"searches", "--json"}, v).find("\"best_vs_compile\":1.75") != std::string::npos);
  CHECK(cluster::console_command({"tree", "s1", "--json"}, v).find("\"best_vs_compile\":1.75") != std::string::npos);
  CHECK(cluster::console_command({"best", "s1"}, v).find("void kernel_2() {}") != std::string::npos);
  const std::string tree = cluster::console_command({"tree", "s1"}, v);
  CHECK(tree.find("1 seed ok") != std::string::npos);
  CHECK(tree.find("  3 mutate incorrect") != std::string::npos);
  CHECK(cluster::console_command({"tree", "s1", "--depth", "1"}, v).find("mutate") == std::string::npos);
  CHECK(cluster::console_command({"devices"}, v).find("busy (s1 node 4)") != std::string::npos);
  CHECK(cluster::console_command({"stats", "--json"}, v).find("\"queued\":3") != std::string::npos);
  CHECK(cluster::console_command({"stats"}, v).find("busy 94.7 %") != std::string::npos);
  CHECK(cluster::console_command({"node", "s1", "9"}, v).rfind("error: search 's1' has no node 9", 0) == 0);
  CHECK(cluster::console_command({"frobnicate"}, v).rfind("error: unknown command", 0) == 0);
  CHECK(cluster::console_command({"submit", "x.toml"}, v).rfind("error: 'submit' needs the running node", 0) == 0);
  store.reset();
  fs::remove_all(dir);
}

TEST_CASE("a search with a node that cannot be read is named as unreadable by every view, never counted short",
          "[cluster]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-unreadable-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  {
    auto st = Store::open(dir);
    REQUIRE(st);
    StoreBatch b;
    SearchRecord r;
    r.id = "s1";
    r.problem = "gelu";
    r.strategy = "greedy";
    r.next_node = 4;
    b.searches.push_back(r);
    for (uint64_t i = 1; i <= 3; ++i) {
      NodeRecord n;
      n.id = i;
      n.state = NodeState::scored;
      n.status = EvalStatus::ok;
      n.fitness = 1.0 + static_cast<double>(i);
      b.nodes.push_back({"s1", n});
    }
    REQUIRE((*st)->write(b));
  }
  test::put_raw(dir, "nodes", test::node_key("s1", 2), "not a node");
  auto st = Store::open(dir, true);
  REQUIRE(st);
  cluster::ClusterView v;
  v.store = std::move(*st);
  const std::string list = cluster::console_command({"searches", "--json"}, v);
  CHECK(list.find("\"state\":\"unreadable\"") != std::string::npos);
  CHECK(list.find("node 2") != std::string::npos);
  CHECK(list.find("\"evaluated\"") == std::string::npos);  // no counts from the two nodes that could be read
  CHECK(cluster::console_command({"searches"}, v).find("error:") != std::string::npos);
  for (auto words : std::vector<std::vector<std::string>>{
           {"show", "s1"}, {"best", "s1"}, {"tree", "s1", "--json"}, {"tree", "s1", "--json", "--max-nodes", "2"}}) {
    INFO(words[0]);
    const std::string out = cluster::console_command(words, v);
    CHECK(out.rfind("error:", 0) == 0);
    CHECK(out.find("node 2") != std::string::npos);
  }
  const std::string node2 = cluster::console_command({"node", "s1", "2", "--json"}, v);
  CHECK(node2.rfind("error:", 0) == 0);
  CHECK(node2.find("cannot be decoded") != std::string::npos);
  CHECK(cluster::console_command({"node", "s1", "3", "--json"}, v).find("\"id\":3") != std::string::npos);
  v.store.reset();
  fs::remove_all(dir);
}

TEST_CASE("the tree of a search is rebuilt for the dashboard only when it changed or its copy is old", "[cluster]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-tree-cache-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  auto st = Store::open(dir);
  REQUIRE(st);
  std::shared_ptr<Store> store = std::move(*st);
  auto write_nodes = [&](uint64_t from, uint64_t to) {
    StoreBatch b;
    SearchRecord r;
    r.id = "s1";
    r.problem = "gelu";
    r.next_node = to + 1;
    b.searches.push_back(r);
    for (uint64_t i = from; i <= to; ++i) {
      NodeRecord n;
      n.id = i;
      n.state = NodeState::scored;
      n.status = EvalStatus::ok;
      n.fitness = 1.0 + static_cast<double>(i) / 100;
      b.nodes.push_back({"s1", n});
    }
    REQUIRE(store->write(b));
  };
  write_nodes(1, 3);
  cluster::ClusterView v;
  v.store = store;
  v.trees = std::make_shared<cluster::TreeCache>();
  SearchStatus live;
  live.search = "s1";
  live.evaluated = 3;
  v.live.push_back(live);
  const std::string first = cluster::console_command({"tree", "s1", "--json"}, v);
  CHECK(first.find("\"id\":3") != std::string::npos);
  // Two more nodes stored, the live status not yet told: the same tree (nothing says it changed).
  write_nodes(4, 5);
  CHECK(cluster::console_command({"tree", "s1", "--json"}, v) == first);
  // The live status moved, but the copy is younger than the limit: still the copy.
  v.live[0].evaluated = 5;
  CHECK(cluster::console_command({"tree", "s1", "--json"}, v) == first);
  // Older than the limit and changed: rebuilt from the store.
  REQUIRE(v.trees->by_search.size() == 1);
  v.trees->by_search.begin()->second.built -= cluster::TreeCache::kTreeJsonMaxAge;  // (only the tree so far)
  const std::string again = cluster::console_command({"tree", "s1", "--json"}, v);
  CHECK(again.find("\"id\":5") != std::string::npos);
  // Unchanged counts but a copy older than the longer limit: rebuilt too (node states in flight may differ).
  write_nodes(6, 6);
  v.trees->by_search.begin()->second.built -= cluster::TreeCache::kTreeJsonUnchangedAge;
  CHECK(cluster::console_command({"tree", "s1", "--json"}, v).find("\"id\":6") != std::string::npos);
  // The searches list (what every open searches page asks every 2 s) is kept the same way: its summary reads
  // every node of the search.
  v.live[0].evaluated = 6;
  const std::string list = cluster::console_command({"searches", "--json"}, v);
  CHECK(list.find("\"evaluated\":6") != std::string::npos);
  write_nodes(7, 8);
  CHECK(cluster::console_command({"searches", "--json"}, v) == list);  // nothing said it changed
  v.live[0].evaluated = 8;
  for (auto& [key, e] : v.trees->by_search) e.built -= cluster::TreeCache::kTreeJsonMaxAge;
  CHECK(cluster::console_command({"searches", "--json"}, v).find("\"evaluated\":8") != std::string::npos);
  // Without a cache (a view built elsewhere) every request reads the store.
  v.trees = nullptr;
  write_nodes(9, 9);
  CHECK(cluster::console_command({"tree", "s1", "--json"}, v).find("\"id\":9") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a large tree sent to a page keeps the notable nodes with their ancestors and says how many it left out",
          "[cluster]") {
  std::vector<NodeRecord> nodes;
  for (uint64_t i = 1; i <= 5000; ++i) {  // a chain of chains: node i's parent is i / 2
    NodeRecord n;
    n.id = i;
    if (i > 1) n.parents = {i / 2};
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    n.fitness = i == 777 ? 9.0 : 1.0 + static_cast<double>(i % 97) / 100;
    nodes.push_back(n);
  }
  SearchRecord r;
  r.id = "big";
  r.problem = "gelu";
  const std::string all = cluster::search_tree_json(r, nodes, nullptr);
  CHECK(all.find("\"nodes_total\":5000,\"nodes_shown\":5000") != std::string::npos);
  const std::string capped = cluster::search_tree_json(r, nodes, nullptr, 0, 400);
  std::smatch m;
  REQUIRE(std::regex_search(capped, m, std::regex("\"nodes_total\":5000,\"nodes_shown\":([0-9]+)")));
  const int shown = std::stoi(m[1]);
  CHECK(shown < 5000);
  CHECK(shown >= 400);
  // Every listed node's parent is listed too (the tree stays connected), the best (777) and its line are there,
  // and so is the latest node; the curve still reaches the best.
  std::set<uint64_t> ids;
  const std::regex listed("\\{\"id\":([0-9]+),\"parents\":\\[([0-9]*)");
  for (auto it = std::sregex_iterator(capped.begin(), capped.end(), listed); it != std::sregex_iterator(); ++it)
    ids.insert(std::stoull((*it)[1]));
  CHECK(static_cast<int>(ids.size()) == shown);
  for (auto it = std::sregex_iterator(capped.begin(), capped.end(), listed); it != std::sregex_iterator(); ++it)
    if ((*it)[2].length() > 0) CHECK(ids.count(std::stoull((*it)[2])) == 1);
  for (uint64_t id : {777u, 388u, 194u, 1u, 5000u}) CHECK(ids.count(id) == 1);
  CHECK(capped.find("\"best_node\":777") != std::string::npos);
  CHECK(capped.find("[777,9") != std::string::npos);  // the curve's point at the best: all nodes still count
}
