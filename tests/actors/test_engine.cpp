// The actor engine end to end with the null backend (no compiler, synthetic verdicts) and a real
// RocksDB store: budgets, counts, persistence, and a resumed search that continues instead of restarting.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <atomic>
#include <map>
#include <set>
#include <unistd.h>

#include "actors/protocol/run_search.hpp"
#include "knowledge/template_library.hpp"
#include "runtime/memory/lessons.hpp"
#include "runtime/operators/null_operator.hpp"
#include "runtime/operators/template_operator.hpp"
#include "tools/kevolve/report/report_writer.hpp"

#include <sstream>
#include "runtime/config/problem_loader.hpp"
#include "storage/store.hpp"
#include "tests/test_support/raw_store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

RunConfig null_config(const std::string& store, int budget) {
  RunConfig c;
  c.problem = "gelu";
  c.search_id = "engine-test";
  c.backend = "null";
  c.op = "null";
  c.max_in_flight = 16;
  c.build_workers = 2;
  c.budget.max_evaluations = budget;
  c.store = store;
  c.checkpoint_seconds = 0;
  c.strategy.name = "greedy";
  return c;
}

ProblemSpec gelu() {
  auto p = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/gelu/problem.toml");
  REQUIRE(p);
  return *p;
}

}  // namespace

TEST_CASE("a null-backend search evaluates exactly its budget and records every node once", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  for (const char* strategy : {"greedy", "mcts", "evolutionary"}) {
    RunConfig c = null_config(dir + "/" + strategy, 300);
    c.strategy.name = strategy;
    auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
    INFO(strategy << ": " << (s ? s->stop_reason : s.error()));
    REQUIRE(s);
    CHECK(s->finished);
    CHECK(s->evaluated == 300);
    CHECK(s->stop_reason.find("evaluation budget") != std::string::npos);
    auto store = Store::open(c.store, true);
    REQUIRE(store);
    auto nodes = (*store)->nodes(c.search_id);
    CHECK(nodes.size() == 300);
    for (auto& n : nodes) {
      CHECK(n.scored());
      CHECK((*store)->artifact(c.search_id, n.id, "source"));
      // Each verdict says where its time went: build, device queue + evaluation, the device's own share.
      auto profile = (*store)->artifact(c.search_id, n.id, "profile");
      REQUIRE(profile);
      CHECK(profile->rfind("timeline: build (queue + compile) ", 0) == 0);
      CHECK(profile->find(", device (queue + evaluation) ") != std::string::npos);
      CHECK(profile->find("on the device: ") != std::string::npos);
    }
    CHECK((*store)->search(c.search_id)->finished);
  }
  fs::remove_all(dir);
}

TEST_CASE("a search with thousands in flight evaluates every node once and loses none", "[engine]") {
  // More nodes in flight than the node runner sends on at once per stage (512): the rest wait in the runner
  // and must each still be built, evaluated once and scored.
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-wide-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 6000);
  c.max_in_flight = 3000;
  c.null_ledger = dir + ".ledger";
  fs::remove(c.null_ledger);
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(s);
  CHECK(s->finished);
  CHECK(s->evaluated == 6000);
  std::ifstream ledger(c.null_ledger);
  std::set<std::string> evaluated;
  size_t lines = 0;
  for (std::string line; std::getline(ledger, line); ++lines) evaluated.insert(line);
  CHECK(lines == 6000);  // each node evaluated once ...
  CHECK(evaluated.size() == 6000);  // ... and every one of them
  auto store = Store::open(c.store, true);
  REQUIRE(store);
  auto nodes = (*store)->nodes(c.search_id);
  CHECK(nodes.size() == 6000);
  size_t scored = 0;
  for (auto& n : nodes) scored += n.scored() ? 1 : 0;
  CHECK(scored == 6000);
  fs::remove_all(dir);
  fs::remove(c.null_ledger);
}

TEST_CASE("running a finished search again reports it without evaluating anything", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-again-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 40);
  c.null_ledger = dir + ".ledger";
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  auto again = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(again);
  CHECK(again->evaluated == 40);
  std::ifstream ledger(c.null_ledger);
  int lines = 0;
  for (std::string l; std::getline(ledger, l);) ++lines;
  CHECK(lines == 40);
  fs::remove_all(dir);
  fs::remove(c.null_ledger);
}

TEST_CASE("a search whose stored record or nodes cannot be read is refused, not started over", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-corrupt-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 12);
  c.budget.max_evaluations = 12;
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  const auto nodes_before = [&] {
    auto st = Store::open(dir, true);
    REQUIRE(st);
    return (*st)->nodes(c.search_id).size();
  };
  REQUIRE(nodes_before() >= 12);
  // One damaged node: resuming would reuse its id.
  test::put_raw(dir, "nodes", test::node_key(c.search_id, 3), "damaged");
  c.budget.max_evaluations = 30;
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE_FALSE(s);
  CHECK(s.code() == Errc::corrupt);
  CHECK(s.error().find("node 3") != std::string::npos);
  CHECK(s.error().find("refusing") != std::string::npos);
  // The search record itself: starting at node 1 would overwrite every node.
  test::put_raw(dir, "searches", c.search_id, "damaged");
  const size_t kept = nodes_before();
  s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE_FALSE(s);
  CHECK(s.code() == Errc::corrupt);
  CHECK(s.error().find("refusing to start it over") != std::string::npos);
  CHECK(nodes_before() == kept);
  fs::remove_all(dir);
}

// A table of artifacts no resume reads (the sources of scored nodes) was damaged in silence before: a search
// whose operator does not read its nodes' sources went on. Now a writer opens only a store whose every table
// block reads back.
TEST_CASE("a resume on a store whose artifacts table is damaged is refused at opening naming the table file",
          "[engine]") {
  const std::string dir =
      (fs::temp_directory_path() / ("kevolve-engine-artifacts-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 12);
  c.budget.max_evaluations = 12;
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  test::flush_tables(dir);
  // Bytes changed in the middle of the table file that holds the sources (as a failing disk would).
  fs::path sources;
  for (auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".sst") continue;
    std::ifstream f(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (bytes.find("null candidate") != std::string::npos) sources = e.path();
  }
  REQUIRE(!sources.empty());
  {
    std::fstream f(sources, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(sources) / 3));
    const std::string junk(64, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  c.budget.max_evaluations = 20;
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE_FALSE(s);
  INFO(s.error());
  CHECK(s.error().find("is damaged") != std::string::npos);
  CHECK(s.error().find(sources.filename().string()) != std::string::npos);
  CHECK(s.error().find("kevolve store repair") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a search whose record was lost but whose nodes remain is rebuilt from them, not started over", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-orphans-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 12);
  c.budget.max_evaluations = 12;
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  std::map<uint64_t, NodeRecord> first;
  {
    auto store = Store::open(dir, true);
    REQUIRE(store);
    for (auto& n : (*store)->nodes(c.search_id)) first[n.id] = n;
  }
  REQUIRE(first.size() >= 12);
  test::delete_raw(dir, "searches", c.search_id);  // what a repair leaves when the record's block was lost
  c.budget.max_evaluations = 30;
  c.null_ledger = dir + ".ledger";  // every evaluation of this run: none of the 12 scored nodes again
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(s);
  CHECK(s->evaluated == 30);
  {
    std::ifstream ledger(c.null_ledger);
    std::string search;
    uint64_t id = 0;
    int lines = 0;
    while (ledger >> search >> id) {
      ++lines;
      CHECK(id > 12);
    }
    CHECK(lines >= 18);
  }
  fs::remove(c.null_ledger);
  auto store = Store::open(dir, true);
  REQUIRE(store);
  auto record = (*store)->search(c.search_id);
  REQUIRE(record);  // rebuilt and saved
  std::map<uint64_t, NodeRecord> after;
  for (auto& n : (*store)->nodes(c.search_id)) after[n.id] = n;
  for (auto& [id, n] : first) {  // the earlier nodes kept as they were: no id reused
    REQUIRE(after.count(id));
    CHECK(after[id].fitness == n.fitness);
    CHECK(after[id].params == n.params);
  }
  CHECK(after.size() >= 30);
  fs::remove_all(dir);
}

TEST_CASE("a node whose source was lost before it was scored is named and marked and never evaluated empty",
          "[engine]") {
  const std::string dir =
      (fs::temp_directory_path() / ("kevolve-engine-nosource-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 12);
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  uint64_t lost_id = 0;
  {  // what a store left by a repair can hold: a committed, unscored node whose source artifact is gone
    auto store = Store::open(dir);
    REQUIRE(store);
    auto record = (*store)->search(c.search_id);
    REQUIRE(record);
    lost_id = record->next_node;
    NodeRecord n;
    n.id = lost_id;
    n.op = Operation::seed;
    n.params["variant"] = "lost";
    record->next_node = lost_id + 1;
    record->finished = false;
    record->stop_reason.clear();
    StoreBatch b;
    b.searches.push_back(*record);
    b.nodes.push_back({c.search_id, n});
    REQUIRE((*store)->write(b));
  }
  c.budget.max_evaluations = 16;
  c.null_ledger = dir + ".ledger";
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(s);
  {
    std::ifstream ledger(c.null_ledger);
    std::string search;
    uint64_t id = 0;
    while (ledger >> search >> id) CHECK(id != lost_id);  // never evaluated (as an empty kernel)
  }
  fs::remove(c.null_ledger);
  auto store = Store::open(dir, true);
  REQUIRE(store);
  bool seen = false;
  for (auto& n : (*store)->nodes(c.search_id))
    if (n.id == lost_id) {
      seen = true;
      CHECK(n.scored());
      CHECK(n.status == EvalStatus::harness_error);
      CHECK(n.reason == "source_lost");
    }
  CHECK(seen);
  fs::remove_all(dir);
}

TEST_CASE("a search paused before it stopped runs again under a plain run that could not resume it", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-paused-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 12);
  {  // what a node killed after a console `pause` leaves: the record says paused, nothing finished
    auto store = Store::open(dir);
    REQUIRE(store);
    SearchRecord r;
    r.id = c.search_id;
    r.problem = "gelu";
    r.strategy = "greedy";
    r.paused = true;
    StoreBatch b;
    b.searches.push_back(r);
    REQUIRE((*store)->write(b));
  }
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(s);
  CHECK(s->finished);
  CHECK(s->evaluated == 12);
  auto store = Store::open(dir, true);
  REQUIRE(store);
  CHECK_FALSE((*store)->search(c.search_id)->paused);
  fs::remove_all(dir);
}

TEST_CASE("a search with a larger budget continues from the stored graph", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-grow-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 50);
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  std::map<uint64_t, NodeRecord> first;
  {
    auto store = Store::open(dir, true);
    REQUIRE(store);
    for (auto& n : (*store)->nodes(c.search_id)) first[n.id] = n;
  }
  // The same search, its budget raised: 30 more evaluations, the first 50 nodes kept as they were.
  c.budget.max_evaluations = 80;
  auto s = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(s);
  CHECK(s->finished);
  CHECK(s->evaluated == 80);
  CHECK(s->stop_reason.find("evaluation budget of 80") != std::string::npos);
  auto store = Store::open(dir, true);
  REQUIRE(store);
  CHECK((*store)->searches().size() == 1);
  size_t kept = 0, grown_from_old = 0;
  for (auto& n : (*store)->nodes(c.search_id)) {
    auto it = first.find(n.id);
    if (it != first.end()) {
      kept += n.fitness == it->second.fitness && n.params == it->second.params ? 1 : 0;
    } else {
      for (auto p : n.parents) grown_from_old += first.count(p) ? 1 : 0;
    }
  }
  CHECK(kept == first.size());  // nothing overwritten
  CHECK(grown_from_old > 0);    // the new nodes descend from the stored graph, not from a fresh start
  // A search that ended for another reason (here: a finished search at the same budget) stays finished.
  auto again = run_search(c, gelu(), std::make_shared<NullOperator>(), {});
  REQUIRE(again);
  CHECK(again->evaluated == 80);
  fs::remove_all(dir);
}

namespace {

// An operator with a small window over a small space of points (n in [0, 240)): it draws until has_params()
// says a point is new, so every point it proposes that the search refuses is one its graph did not know of.
class SmallSpaceOperator : public Operator {
 public:
  std::string name() const override { return "small-space"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal&, const SearchGraph& g, Rng& rng, const OperatorContext&) override {
    ++proposed;
    Offspring o;
    o.params["op"] = "";  // one space for every operation
    for (int attempt = 0; attempt < 4096; ++attempt) {
      o.params["n"] = std::to_string(rng() % 240);
      if (!g.has_params(o.params)) break;
    }
    o.candidate.source = "// small-space candidate " + o.params["n"] + "\n";
    return o;
  }
  bool can_repair() const override { return false; }
  size_t history_window() const override { return 8; }  // reads its parents and has_params() only
  std::atomic<int> proposed{0};
};

}  // namespace

TEST_CASE("a resumed search whose operator keeps a small window proposes no point the store already holds",
          "[engine][resume]") {
  // The resumed operator is told only the newest records of its window; the points of the older ones it
  // knows through the parameter index it shares with the search.
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-window-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 120);
  c.max_in_flight = 1;  // one request at a time: no two proposals of one batch can be the same point
  c.op = "small-space";
  REQUIRE(run_search(c, gelu(), std::make_shared<SmallSpaceOperator>(), {}));
  c.budget.max_evaluations = 200;
  auto op = std::make_shared<SmallSpaceOperator>();
  auto s = run_search(c, gelu(), op, {});
  REQUIRE(s);
  CHECK(s->evaluated == 200);
  CHECK(op->proposed.load() == 80);  // every proposal of the resumed run became a node: none was a known point
  auto store = Store::open(dir, true);
  REQUIRE(store);
  std::set<std::string> points;
  for (auto& n : (*store)->nodes(c.search_id)) points.insert(n.params.at("n"));
  CHECK(points.size() == 200);
  fs::remove_all(dir);
}

TEST_CASE("a store holding another problem's search under the same id is refused", "[engine]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-clash-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  RunConfig c = null_config(dir, 5);
  REQUIRE(run_search(c, gelu(), std::make_shared<NullOperator>(), {}));
  auto other = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/softmax_rows/problem.toml");
  auto s = run_search(c, *other, std::make_shared<NullOperator>(), {});
  REQUIRE_FALSE(s);
  CHECK(s.error().find("is for problem 'gelu'") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a real CPU search compiles, verifies and times template kernels through the actors", "[engine][cpu]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-cpu-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  auto t = find_template("cpu", "softmax_rows", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  RunConfig c;
  c.problem = spec->file;
  c.search_id = "cpu-test";
  c.backend = "cpu";
  c.max_in_flight = 2;
  c.budget.max_evaluations = 6;
  c.store = dir;
  c.checkpoint_seconds = 0;
  c.eval.min_time_s = 0.02;
  c.eval.min_reps = 5;
  auto s = run_search(c, *spec, std::make_shared<TemplateOperator>(*t), {});
  REQUIRE(s);
  CHECK(s->evaluated == 6);
  CHECK(s->correct >= 1);
  CHECK(s->best_fitness > 0);
  auto store = Store::open(dir, true);
  REQUIRE(store);
  for (auto& n : (*store)->nodes("cpu-test")) {
    INFO("node " << n.id << ": " << status_name(n.status) << " " << n.message);
    CHECK(n.status == EvalStatus::ok);  // every template instance is a correct kernel
    CHECK((*store)->artifact("cpu-test", n.id, "report"));
    auto diag = (*store)->artifact("cpu-test", n.id, "diagnosis");
    REQUIRE(diag);
    CHECK(diag->find("-bound") != std::string::npos);  // a correct node gets a bound classification
  }
  store->reset();

  // The report re-times the top candidates in a fresh worker and writes json, html and the best source.
  ReportRequest rq;
  rq.store = dir;
  rq.search_id = "cpu-test";
  rq.out_dir = dir + "-out";
  rq.spec = *spec;
  rq.retime_top = 2;
  rq.retime = c.eval;
  auto rep = write_report(rq);
  REQUIRE(rep);
  CHECK(rep->evaluated == 6);
  CHECK(rep->best_speedup > 0);
  std::ifstream js(rq.out_dir + "/report.json");
  std::stringstream j;
  j << js.rdbuf();
  for (const char* key : {"\"search_id\":\"cpu-test\"", "\"best\":{\"node_id\":", "\"speedup\":", "\"status\":\"ok\"",
                          "\"counts\":{\"evaluated\":6,", "\"correct\":", "\"failed\":", "\"retimed\":["})
    CHECK(j.str().find(key) != std::string::npos);
  CHECK(fs::file_size(rq.out_dir + "/best/kernel.cpp") > 100);
  std::ifstream html(rq.out_dir + "/report.html");
  std::stringstream h;
  h << html.rdbuf();
  // The report carries the search's data and the view that draws it (SVG, in the browser: the browser test
  // renders it, tests/actors/dashboard/test_dashboard_browser.cpp).
  CHECK(h.str().find("id='kv-data'") != std::string::npos);
  CHECK(h.str().find("\"curve\":[") != std::string::npos);
  CHECK(h.str().find("\"nodes\":[") != std::string::npos);
  CHECK(h.str().find("function curve(") != std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(rq.out_dir);
}

TEST_CASE("the context memory keeps lessons across searches and a new search starts from the best kernel",
          "[engine][cpu][memory]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-engine-memory-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  auto t = find_template("cpu", "softmax_rows", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  RunConfig c;
  c.problem = spec->file;
  c.backend = "cpu";
  c.hardware = "x86-avx2";
  c.max_in_flight = 2;
  c.store = dir;
  c.checkpoint_seconds = 0;
  c.eval.min_time_s = 0.02;
  c.eval.min_reps = 5;
  c.search_id = "first";
  c.budget.max_evaluations = 5;
  REQUIRE(run_search(c, *spec, std::make_shared<TemplateOperator>(*t), {}));

  Params best_params;
  double best = -1;
  {
    auto store = Store::open(dir, true);
    REQUIRE(store);
    for (auto& n : (*store)->nodes("first"))
      if (n.correct() && n.fitness > best) {
        best = n.fitness;
        best_params = n.params;
      }
    auto bytes = (*store)->artifact(lessons_search(lessons_key(spec->name, "cpu", "x86-avx2")), 0, "lessons");
    REQUIRE(bytes);
    auto l = decode_lessons(*bytes);
    REQUIRE(l);
    CHECK(l->evaluated() == 5);
    REQUIRE_FALSE(l->best.empty());
    CHECK(l->best[0].params == best_params);
    CHECK(l->best[0].source.find("kevolve_kernel") != std::string::npos);
  }
  REQUIRE(best > 0);

  c.search_id = "second";
  c.budget.max_evaluations = 2;
  REQUIRE(run_search(c, *spec, std::make_shared<TemplateOperator>(*t), {}));
  auto store = Store::open(dir, true);
  REQUIRE(store);
  auto nodes = (*store)->nodes("second");
  REQUIRE(!nodes.empty());
  CHECK(nodes.front().op == Operation::seed);
  CHECK(nodes.front().params == best_params);  // the seed is the first search's best kernel, not the naive default
  auto l =
      decode_lessons(*(*store)->artifact(lessons_search(lessons_key(spec->name, "cpu", "x86-avx2")), 0, "lessons"));
  REQUIRE(l);
  CHECK(l->evaluated() == 7);
  CHECK(l->searches == std::vector<std::string>{"first", "second"});

  // warm_start = false: the naive default again.
  c.search_id = "third";
  c.warm_start = false;
  c.budget.max_evaluations = 1;
  store->reset();
  REQUIRE(run_search(c, *spec, std::make_shared<TemplateOperator>(*t), {}));
  auto again = Store::open(dir, true);
  REQUIRE(again);
  CHECK((*again)->nodes("third").front().params == t->defaults());
  again->reset();
  fs::remove_all(dir);
  fs::remove_all(dir + ".checkpoints");
}
