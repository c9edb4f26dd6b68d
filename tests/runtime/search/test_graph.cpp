// SearchGraph: the counts and the parameter index over every node, and the window an operator's copy keeps.
#include <catch2/catch.hpp>

#include <set>

#include <random>

#include "runtime/operators/template_operator.hpp"
#include "runtime/search/graph.hpp"
#include "runtime/search/greedy.hpp"
#include "runtime/search/strategy.hpp"
#include "tests/runtime/search/child_record.hpp"

using namespace kevolve;

namespace {

NodeRecord node(uint64_t id, bool scored, bool correct) {
  NodeRecord n;
  n.id = id;
  if (id > 1) n.parents = {id - 1};
  n.params = {{"block", std::to_string(id)}, {"vec", std::to_string(id % 4)}};
  if (scored) {
    n.state = NodeState::scored;
    n.status = correct ? EvalStatus::ok : EvalStatus::incorrect;
    n.fitness = correct ? 1.0 + static_cast<double>(id) / 1000 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("a graph with a window holds the newest records and still counts and knows every node", "[search][graph]") {
  SearchGraph g;
  g.retain(100);
  for (uint64_t id = 1; id <= 10000; ++id) g.upsert(node(id, true, id % 3 != 0));
  g.trim();
  CHECK(g.nodes().size() == 100);
  CHECK(g.nodes().begin()->first == 9901);  // the oldest records went first
  CHECK(g.size() == 10000);
  CHECK(g.scored() == 10000);
  CHECK(g.correct() == 10000 - 10000 / 3);
  CHECK(g.in_flight() == 0);
  CHECK(g.find(1) == nullptr);
  CHECK(g.has_params(node(1, true, true).params));  // a dropped node's parameters are never proposed again
  CHECK_FALSE(g.has_params(node(10001, false, false).params));

  // A dropped node sent again with a request (a parent) is held for the request, not counted twice.
  g.upsert(node(5, true, true));
  REQUIRE(g.find(5) != nullptr);
  CHECK(g.find(5)->params.at("block") == "5");
  CHECK(g.size() == 10000);
  CHECK(g.scored() == 10000);
  // Nodes added after a pass are dropped at the next, once a quarter of the window came in.
  for (uint64_t id = 10001; id <= 10030; ++id) g.upsert(node(id, true, true));
  g.trim();
  CHECK(g.find(5) == nullptr);
  CHECK(g.nodes().size() == 100);
  REQUIRE(g.best());
  CHECK(*g.best() == 10030);
}

TEST_CASE("a trimmed graph keeps what the search still needs: nodes in flight, kept ones and the best",
          "[search][graph]") {
  SearchGraph g;
  g.retain(50);
  g.upsert(node(1, true, true));
  NodeRecord star = node(2, true, true);
  star.fitness = 1000;  // the best of the whole search, and among its oldest nodes
  g.upsert(star);
  for (uint64_t id = 3; id <= 5000; ++id) g.upsert(node(id, id % 10 != 0, true));  // every tenth in flight
  g.trim([](const NodeRecord& n) { return !n.scored() || n.id == 1; });
  CHECK(g.find(1) != nullptr);                                                // kept by the caller
  CHECK(g.find(2) != nullptr);                                                // the best
  for (uint64_t id = 10; id <= 5000; id += 10) CHECK(g.find(id) != nullptr);  // in flight
  CHECK(g.find(3) == nullptr);
  REQUIRE(g.best());
  CHECK(*g.best() == 2);
  const auto top = g.best_k(3);
  REQUIRE(top.size() == 3);
  CHECK(top[0] == 2);
  CHECK(top[1] == 4999);
  CHECK(top[2] == 4998);
  // Ranked before the window dropped them, the best nodes of the whole search are the same with or without it.
  SearchGraph whole;
  whole.upsert(node(1, true, true));
  whole.upsert(star);
  for (uint64_t id = 3; id <= 5000; ++id) whole.upsert(node(id, id % 10 != 0, true));
  CHECK(whole.best_k(SearchGraph::kTop) == g.best_k(SearchGraph::kTop));
}

TEST_CASE("without a window a graph holds every record, and trim keeps them all", "[search][graph]") {
  SearchGraph g;
  for (uint64_t id = 1; id <= 1000; ++id) g.upsert(node(id, id % 2 == 0, true));
  g.trim();
  CHECK(g.nodes().size() == 1000);
  CHECK(g.size() == 1000);
  CHECK(g.scored() == 500);
  CHECK(g.in_flight() == 500);
  REQUIRE(g.best());
  CHECK(*g.best() == 1000);
  // Ids far beyond a search's range are held and counted like any other.
  g.upsert(node(uint64_t(1) << 40, true, true));
  CHECK(g.size() == 1001);
  CHECK(g.find(uint64_t(1) << 40) != nullptr);
}

TEST_CASE("the template operator mutates a parent sent again after its record left the window", "[search][graph]") {
  KernelTemplate t;
  t.problem = "synthetic";
  t.backend = "cpu";
  t.source = "// block={{block}} vec={{vec}}\n";
  t.dir = "synthetic";
  ParamDef block{"block", {}, true, 0}, vec{"vec", {"0", "1", "2", "3"}, true, 0};
  for (int i = 1; i <= 64; ++i) block.values.push_back(std::to_string(i));
  t.params = {block, vec};
  TemplateOperator op(t);
  REQUIRE(op.history_window() > 0);
  SearchGraph g;
  g.retain(op.history_window());
  for (uint64_t id = 1; id <= 200; ++id) g.upsert(node(id, true, true));  // more than the kTop best kept
  g.retain(8);
  g.trim();
  REQUIRE(g.find(2) == nullptr);
  g.upsert(node(2, true, true));  // the parent, as the search sends it with the request
  Rng rng(7);
  auto child = op.make({Operation::mutate, {2}, 0}, g, rng);
  REQUIRE(child);
  CHECK_FALSE(g.has_params(child->params));  // a point no node of the whole search had
}

TEST_CASE("greedy holds at most its cap of open nodes and still expands the best first", "[search][graph]") {
  GreedyStrategy greedy(StrategyConfig{});
  SearchGraph g;
  const uint64_t n = GreedyStrategy::kOpenCap + 5000;
  for (uint64_t id = 1; id <= n; ++id) {
    NodeRecord r = node(id, true, true);
    r.parents.clear();
    r.fitness = static_cast<double>((id * 7919) % n);  // every fitness once, in no order
    g.upsert(r);
    greedy.observe(g, r);
  }
  CHECK(greedy.open_size() == GreedyStrategy::kOpenCap);
  Rng rng(1);
  const auto props = greedy.propose(g, 1, rng);
  REQUIRE(props.size() == 1);
  REQUIRE(props[0].parents.size() == 1);
  CHECK(g.find(props[0].parents[0])->fitness == static_cast<double>(n - 1));  // the best node
}

TEST_CASE("the hash set holds every hash it was given through its growth and no other", "[search][graph]") {
  HashSet64 s;
  std::mt19937_64 rng(42);
  std::vector<uint64_t> in;
  for (int i = 0; i < 200000; ++i) in.push_back(rng() | 2);  // never 0 or 1, which share a slot key
  for (uint64_t h : in) CHECK(s.insert(h));
  CHECK(s.size() == in.size());
  size_t held = 0, stray = 0;
  for (uint64_t h : in) held += s.contains(h);
  for (int i = 0; i < 200000; ++i) stray += s.contains((rng() | 2) ^ 0x8000000000000000ull);
  CHECK(held == in.size());
  CHECK(stray == 0);
  CHECK_FALSE(s.insert(in.front()));  // held already
  CHECK(s.size() == in.size());
}

namespace {

// A search loop without actors over a template of 400 points whose fitness is known; with `window` > 0 the
// graph drops scored records the strategy does not keep, as the search actor does. Returns each node made
// (operation, parents, parameters), in order.
std::vector<std::string> trace_search(const std::string& strategy, size_t window, size_t resume_at = 0) {
  KernelTemplate t;
  t.problem = "synthetic";
  t.backend = "cpu";
  t.source = "// a={{a}} b={{b}}\n";
  t.dir = "synthetic";
  ParamDef a{"a", {}, true, 0}, b{"b", {}, true, 0};
  for (int i = 0; i < 20; ++i) {
    a.values.push_back(std::to_string(i));
    b.values.push_back(std::to_string(i));
  }
  t.params = {a, b};
  TemplateOperator op(t);
  StrategyConfig sc;
  sc.name = strategy;
  sc.max_children = 3;
  sc.islands = 3;
  sc.population = 4;
  auto s = make_strategy(sc);
  REQUIRE(s);
  REQUIRE((*s)->bounded());
  SearchGraph g;
  (*s)->init(g);
  if (window > 0) g.retain(window);
  Rng rng(5);
  std::vector<std::string> trace;
  std::vector<NodeRecord> stored;  // every record as the store holds it, for the resume
  uint64_t next = 1;
  while (g.size() < 300) {
    if (resume_at > 0 && g.size() >= resume_at) {  // a fresh process: a new graph and strategy from the store
      resume_at = 0;
      g = SearchGraph();
      s = make_strategy(sc);
      REQUIRE(s);
      std::vector<NodeRecord> loaded(stored.rbegin(), stored.rend());  // in no particular order
      load_stored(g, **s, loaded, window);
      CHECK(loaded.empty());
      if (window > 0) CHECK(g.nodes().size() < g.size());  // dropped while loading
    }
    auto props = (*s)->propose(g, 4, rng);
    if (props.empty()) break;
    std::vector<NodeRecord> made;
    for (auto& p : props) {
      auto child = op.make(p, g, rng);
      if (!child) continue;
      const NodeRecord n = test::child_record(next++, p, child->params);
      g.upsert(n);
      made.push_back(n);
    }
    for (auto& n : made) {
      const int x = std::stoi(n.params.at("a")), y = std::stoi(n.params.at("b"));
      n.state = NodeState::scored;
      n.status = (x * 7 + y) % 5 == 3 ? EvalStatus::incorrect : EvalStatus::ok;
      n.fitness = n.status == EvalStatus::ok ? 1.0 + (x * 13 + y * 7) % 17 / 4.0 : 0;
      g.upsert(n);
      stored.push_back(n);
      (*s)->observe(g, n);
      if (window > 0) g.trim([&](const NodeRecord& r) { return !r.scored() || (*s)->keeps(r.id); });
      std::string line = std::string(operation_name(n.op)) + " of";
      for (auto p : n.parents) line += " " + std::to_string(p);
      trace.push_back(line + ": " + params_key(n.params));
    }
  }
  if (window > 0) CHECK(g.nodes().size() < g.size());  // records were dropped
  return trace;
}

}  // namespace

TEST_CASE("greedy and the islands choose the same parents and children with the graph trimmed as without it",
          "[search][graph]") {
  for (const char* strategy : {"greedy", "evolutionary"}) {
    INFO(strategy);
    const auto whole = trace_search(strategy, 0);
    const auto trimmed = trace_search(strategy, 8);
    CHECK(whole.size() >= 250);
    CHECK(trimmed == whole);
  }
}

TEST_CASE("a resumed search loads its graph trimmed, newest first, and goes on as the whole graph would",
          "[search][graph][resume]") {
  for (const char* strategy : {"greedy", "evolutionary"}) {
    INFO(strategy);
    const auto whole = trace_search(strategy, 0);
    CHECK(trace_search(strategy, 0, 150) == whole);  // the whole graph loaded, then init()
    CHECK(trace_search(strategy, 8, 150) == whole);  // loaded from the newest back, trimmed to 8 as it comes
  }
}

TEST_CASE("graphs that share a parameter index know each other's points and a graph of its own does not",
          "[search][graph]") {
  auto index = std::make_shared<ParamIndex>();
  SearchGraph search, op, other;
  search.share_params(index);
  op.share_params(index);
  op.retain(4);
  search.upsert(node(1, true, true));
  search.upsert(node(2, true, false));
  CHECK(op.has_params(node(1, true, true).params));  // told of nothing, it knows the search's points
  CHECK(op.has_params(node(2, true, false).params));
  CHECK(op.nodes().empty());
  CHECK_FALSE(other.has_params(node(1, true, true).params));
  op.upsert(node(3, false, false));
  CHECK(search.has_params(node(3, false, false).params));
  CHECK(index->held() == 3);
}

TEST_CASE("with a store behind it the parameter index holds only the points the store does not have yet",
          "[search][graph]") {
  std::set<uint64_t> store;  // what the store has committed
  auto index = std::make_shared<ParamIndex>([&store](uint64_t h) { return store.count(h) > 0; }, 64);
  SearchGraph g;
  g.share_params(index);
  for (uint64_t id = 1; id <= 10000; ++id) {
    NodeRecord n = node(id, true, true);
    n.params = {{"x", std::to_string(id)}};
    g.upsert(n);
    if (id % 10 == 0)  // a commit every ten nodes
      for (uint64_t c = id - 9; c <= id; ++c) store.insert(params_hash({{"x", std::to_string(c)}}));
    CHECK(index->held() <= 64);  // swept as the store takes them: bounded by what is not committed
  }
  for (uint64_t id = 1; id <= 10000; id += 37) CHECK(g.has_params({{"x", std::to_string(id)}}));
  CHECK_FALSE(g.has_params({{"x", "10001"}}));
  // A point the store already has is not held again (a resumed search's nodes, an operator's copies).
  CHECK_FALSE(index->insert(params_hash({{"x", "5"}})));
  // Points the store never takes (its writes refused) are all kept, however many: never forgotten.
  for (uint64_t id = 20001; id <= 20500; ++id) CHECK(index->insert(params_hash({{"x", std::to_string(id)}})));
  CHECK(index->held() >= 500);
  for (uint64_t id = 20001; id <= 20500; ++id) CHECK(index->contains(params_hash({{"x", std::to_string(id)}})));
}
