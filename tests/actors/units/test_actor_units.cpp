// The search actor, the store actor and the cluster registry's dispatch, each alone under CAF's
// deterministic test coordinator (caf/test/dsl.hpp): every message is delivered by the test, timers fire
// when the test says, and the collaborators are stub actors. The store is a real RocksDB in a temp dir.
// CAF's own test framework runs this file (its macros and main), so it is a binary of its own.
#define CAF_SUITE actor_units
#include <caf/test/unit_test_impl.hpp>
// after the framework
#include <caf/test/dsl.hpp>

#include <filesystem>
#include <memory>
#include <unistd.h>
#include <vector>

#include "actors/cluster/cluster_registry.hpp"
#include "actors/protocol/engine.hpp"
#include "actors/search/search_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "runtime/config/problem_loader.hpp"
#include "storage/store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

struct kevolve_config : caf::actor_system_config {
  kevolve_config() { add_message_types<caf::id_block::kevolve>(); }
};

int dirs_made = 0;

struct fixture : test_coordinator_fixture<kevolve_config> {
  std::string dir;
  fixture() {
    dir =
        (fs::temp_directory_path() / ("kevolve-units-" + std::to_string(getpid()) + "-" + std::to_string(dirs_made++)))
            .string();
    fs::remove_all(dir);
  }
  ~fixture() override {
    run();
    fs::remove_all(dir);
  }

  std::shared_ptr<Store> store(bool read_only = false) {
    if (read_only) {  // a store that exists but refuses every write (RocksDB's read-only mode)
      auto w = Store::open(dir);
      CAF_REQUIRE(static_cast<bool>(w));
    }
    auto s = Store::open(dir, read_only);
    CAF_REQUIRE(static_cast<bool>(s));
    return std::shared_ptr<Store>(std::move(*s));
  }

  // Waits for the reply of a request whose answer the coordinator has already delivered.
  template <class T, class Handle>
  T answer(Handle& h) {
    T out{};
    h.receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { CAF_FAIL("no answer: " << sys.render(e)); });
    return out;
  }
};

NodeEntry node_entry(const std::string& search, uint64_t id) {
  NodeEntry e;
  e.search = search;
  e.node.id = id;
  e.node.state = NodeState::evaluated;
  e.node.status = EvalStatus::ok;
  e.node.fitness = 1.5;
  return e;
}

// --- stubs -----------------------------------------------------------------------------------------

// An operator that makes `n`-th child with source "kernel n" and params {n}: every child is new.
operator_actor::behavior_type counting_operator(operator_actor::pointer self, std::shared_ptr<int> made) {
  return {[self, made](atoms::make_atom, std::vector<MakeRequest>& reqs) {
    std::vector<MakeReply> out;
    for (size_t i = 0; i < reqs.size(); ++i) {
      MakeReply r;
      const int n = ++*made;
      r.candidate.source = "kernel " + std::to_string(n);
      r.candidate.entry = "kernel";
      r.params["n"] = std::to_string(n);
      r.candidate.parameters = r.params;
      out.push_back(std::move(r));
    }
    return out;
  }};
}

build_actor::behavior_type building_farm(build_actor::pointer) {
  return {[](atoms::build_atom, BuildJob&) {
    BuildOutcome o;
    o.build.status = Status::success();
    return o;
  }};
}

// A device whose verdicts are ok with a speedup of 1 + n/10 (n: the node's "n" parameter).
device_actor::behavior_type scoring_device(device_actor::pointer) {
  return {[](atoms::spec_atom, const std::string&, const std::string&) {},
          [](atoms::eval_atom, EvalJob& job) {
            EvalResult r;
            r.status = EvalStatus::ok;
            r.speedup = 1 + std::stod(job.params["n"]) / 10;
            return r;
          }};
}

// Records every status push.
engine_actor::behavior_type watching_engine(engine_actor::pointer, std::shared_ptr<std::vector<SearchStatus>> pushes) {
  return {[pushes](atoms::progress_atom, SearchStatus& s) { pushes->push_back(s); },
          [](atoms::submit_atom, const std::string&) { return ActionReply::refused(Errc::unavailable, "not a node"); },
          [](atoms::tick_atom) {}};
}

}  // namespace

CAF_TEST_FIXTURE_SCOPE(store_actor_units, fixture)

CAF_TEST(a commit answers once its batch and the writes before it are durable) {
  auto st = store();
  auto hdl = spawn_store_actor(sys, st, "", 0, /*own_thread=*/false);
  StoreBatch first, second;
  first.nodes.push_back(node_entry("s", 1));
  second.nodes.push_back(node_entry("s", 2));
  self->send(hdl, atoms::write_atom::value, first);
  auto h = self->request(hdl, caf::infinite, atoms::commit_atom::value, second);
  run();
  Status ok = answer<Status>(h);
  CAF_CHECK(ok.ok());
  CAF_CHECK_EQUAL(st->nodes("s").size(), 2u);
}

CAF_TEST(a lost fire - and-forget write fails every later commit with the count and the cause) {
  auto st = store(/*read_only=*/true);
  auto hdl = spawn_store_actor(sys, st, "", 0, /*own_thread=*/false);
  StoreBatch lost;
  lost.nodes.push_back(node_entry("s", 1));
  lost.nodes.push_back(node_entry("s", 2));
  self->send(hdl, atoms::write_atom::value, lost);
  run();
  for (int i = 0; i < 2; ++i) {  // not only the next commit: every one after it
    auto h = self->request(hdl, caf::infinite, atoms::commit_atom::value, StoreBatch{});
    run();
    Status s = answer<Status>(h);
    CAF_CHECK(!s.ok());
    CAF_CHECK_EQUAL(s.code, Errc::io);
    CAF_CHECK(s.message.find("2 store entries could not be written") != std::string::npos);
  }
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(search_actor_units, fixture)

namespace {

struct SearchRig {
  std::shared_ptr<int> made = std::make_shared<int>(0);
  std::shared_ptr<std::vector<SearchStatus>> pushes = std::make_shared<std::vector<SearchStatus>>();
};

SearchSetup search_setup(caf::actor_system& sys, SearchRig& rig, std::shared_ptr<Store> st, int budget) {
  SearchSetup s;
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/gelu/problem.toml");
  CAF_REQUIRE(static_cast<bool>(spec));
  s.spec = *spec;
  s.config.problem = "gelu";
  s.config.search_id = "unit";
  s.config.backend = "null";
  s.config.max_in_flight = 2;
  s.config.budget.max_evaluations = budget;
  s.config.strategy.name = "greedy";
  s.record.id = "unit";
  s.record.problem = "gelu";
  s.store = spawn_store_actor(sys, st, "", 0, /*own_thread=*/false);
  s.op = sys.spawn(counting_operator, rig.made);
  s.builds = sys.spawn(building_farm);
  s.devices = sys.spawn(scoring_device);
  s.watcher = sys.spawn(watching_engine, rig.pushes);
  return s;
}

bool finished(const SearchRig& rig) { return !rig.pushes->empty() && rig.pushes->back().finished; }

}  // namespace

CAF_TEST(a search evaluates its budget and pushes its progress and ends with its record saved) {
  auto st = store();
  SearchRig rig;
  spawn_search_actor(sys, search_setup(sys, rig, st, 6));
  run_until([&] { return finished(rig); });
  CAF_REQUIRE(finished(rig));
  const SearchStatus& last = rig.pushes->back();
  CAF_CHECK_EQUAL(last.evaluated, 6);
  CAF_CHECK_EQUAL(last.correct, 6);
  CAF_CHECK_EQUAL(last.save_error, "");
  CAF_CHECK(last.stop_reason.find("evaluation budget") != std::string::npos);
  CAF_CHECK(last.best_fitness > 1.0);  // the best of the stub's speedups, 1 + n/10
  // The pushes before the last one said "not finished": the engine learns the end once.
  size_t finished_pushes = 0;
  for (auto& p : *rig.pushes) finished_pushes += p.finished ? 1 : 0;
  CAF_CHECK_EQUAL(finished_pushes, 1u);
  // What the store holds matches what was pushed.
  auto rec = st->search("unit");
  CAF_REQUIRE(static_cast<bool>(rec));
  CAF_CHECK(rec->finished);
  size_t scored = 0;
  for (auto& n : st->nodes("unit")) scored += n.scored() ? 1 : 0;
  CAF_CHECK_EQUAL(scored, 6u);
}

CAF_TEST(a resumed search counts its restored nodes in evaluated and only the work of this run in its rate) {
  auto st = store();
  SearchRig rig;
  SearchSetup setup = search_setup(sys, rig, st, 8);
  for (uint64_t id = 1; id <= 6; ++id) {  // six nodes scored by an earlier run
    NodeRecord n;
    n.id = id;
    n.op = Operation::seed;
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    n.fitness = 1.0;
    setup.nodes.push_back(n);
  }
  setup.record.next_node = 7;
  auto search = spawn_search_actor(sys, std::move(setup));
  // Paused before anything new is scored: the pause pushes a status with the six restored nodes only.
  caf::anon_send(search, atoms::control_atom::value, std::string("pause"));
  sched.run_once();
  caf::anon_send(search, atoms::control_atom::value, std::string("resume"));
  run_until([&] { return finished(rig); });
  CAF_REQUIRE(finished(rig));
  CAF_CHECK_EQUAL(rig.pushes->back().evaluated, 8);
  // The rate is the nodes this run scored over its own time: before it scored anything it is 0, whatever
  // the six restored nodes (counted, they would make it 6 / a few microseconds).
  size_t before_any = 0;
  for (auto& p : *rig.pushes)
    if (p.evaluated == 6) {
      ++before_any;
      CAF_CHECK_EQUAL(p.rate, 0.0);
    }
  CAF_CHECK(before_any > 0);
}

CAF_TEST(a pause from the console is recorded and a search restarted from its store stays paused until resumed) {
  auto st = store();
  SearchRig rig;
  auto search = spawn_search_actor(sys, search_setup(sys, rig, st, 8));
  auto h = self->request(search, caf::infinite, atoms::control_atom::value, std::string("pause"));
  // Until it says it is paused with nothing in flight (a paused search ticks forever: run() would not end).
  auto idle = [](const SearchRig& r) {
    return !r.pushes->empty() && r.pushes->back().paused && r.pushes->back().in_flight == 0;
  };
  run_until([&] { return idle(rig); });
  sched.run();
  const ActionReply paused = answer<ActionReply>(h);
  CAF_CHECK(paused.status.ok());
  CAF_CHECK(paused.said.find("search unit paused") != std::string::npos);
  auto rec = st->search("unit");
  CAF_REQUIRE(static_cast<bool>(rec));
  CAF_CHECK(rec->paused);
  CAF_CHECK(!rec->finished);
  const int made_before = *rig.made;
  CAF_CHECK(made_before <= 2);                          // max_in_flight: what the first proposal asked for
  caf::anon_send_exit(search, caf::exit_reason::kill);  // the node is killed
  sched.run();

  // The node restarts: the search is rebuilt from the store, as load_search does.
  SearchRig again;
  SearchSetup s = search_setup(sys, again, st, 8);
  s.record = *rec;
  s.nodes = st->nodes("unit");
  auto resumed = spawn_search_actor(sys, std::move(s));
  run_until([&] { return idle(again); });
  CAF_CHECK_EQUAL(*again.made, 0);  // still paused: nothing proposed
  CAF_REQUIRE(!again.pushes->empty());
  CAF_CHECK(again.pushes->back().paused);
  CAF_CHECK(!again.pushes->back().finished);
  auto r = self->request(resumed, caf::infinite, atoms::control_atom::value, std::string("resume"));
  run_until([&] { return finished(again); });
  CAF_CHECK(answer<ActionReply>(r).said.find("resumed") != std::string::npos);
  CAF_REQUIRE(finished(again));
  CAF_CHECK_EQUAL(again.pushes->back().evaluated, 8);
  CAF_CHECK(!st->search("unit")->paused);
}

CAF_TEST(a control the search does not know is refused with its code and the search runs on to its end) {
  auto st = store();
  SearchRig rig;
  auto search = spawn_search_actor(sys, search_setup(sys, rig, st, 8));
  auto h = self->request(search, caf::infinite, atoms::control_atom::value, std::string("hold"));
  run_until([&] { return finished(rig); });
  const ActionReply r = answer<ActionReply>(h);
  CAF_CHECK(r.status.code == Errc::invalid_argument);
  CAF_CHECK(r.status.message.find("unknown control 'hold'") != std::string::npos);
  CAF_CHECK_EQUAL(r.line().rfind("error: unknown control 'hold'", 0), 0u);  // what the console shows
  CAF_REQUIRE(finished(rig));
  CAF_CHECK_EQUAL(rig.pushes->back().evaluated, 8);
  CAF_CHECK(!rig.pushes->back().paused);
  CAF_CHECK(!st->search("unit")->cancelled);
}

CAF_TEST(a search cancelled before a restart finishes what it had started and proposes nothing new) {
  auto st = store();
  SearchRig rig;
  SearchSetup s = search_setup(sys, rig, st, 8);
  s.record.cancelled = true;
  s.record.next_node = 2;
  NodeRecord started;  // committed before the restart, never scored
  started.id = 1;
  started.op = Operation::seed;
  started.params["n"] = "5";
  s.nodes.push_back(started);
  Candidate c;
  c.source = "kernel 5";
  c.parameters = started.params;
  s.unfinished[1] = c;
  spawn_search_actor(sys, std::move(s));
  run();
  CAF_REQUIRE(finished(rig));
  CAF_CHECK_EQUAL(*rig.made, 0);
  CAF_CHECK_EQUAL(rig.pushes->back().evaluated, 1);
  CAF_CHECK(rig.pushes->back().stop_reason.find("cancelled from the console") != std::string::npos);
  auto rec = st->search("unit");
  CAF_REQUIRE(static_cast<bool>(rec));
  CAF_CHECK(rec->finished);
  CAF_CHECK(rec->cancelled);
}

CAF_TEST(a search whose store refuses writes stops before evaluating and says its end was not saved) {
  auto st = store(/*read_only=*/true);
  SearchRig rig;
  spawn_search_actor(sys, search_setup(sys, rig, st, 6));
  run_until([&] { return finished(rig); });
  CAF_REQUIRE(finished(rig));
  const SearchStatus& last = rig.pushes->back();
  CAF_CHECK_EQUAL(last.evaluated, 0);  // nothing unrecorded was evaluated
  CAF_CHECK(last.stop_reason.find("the store refused a write") != std::string::npos);
  CAF_CHECK(last.save_error.find("could not be written") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(registry_dispatch_units, fixture)

namespace {

DeviceInfo device_info(int index) {
  DeviceInfo d;
  d.host = "unit";
  d.pid = 1;
  d.index = index;
  d.backend = "null";
  d.name = "stub";
  d.arch = "null";
  return d;
}

EvalJob job(uint64_t node) {
  EvalJob j;
  j.search = "s";
  j.node = node;
  j.backend = "null";
  j.problem = "gelu";
  return j;
}

// A device that answers each job with its own index in `reason`, counting what it got.
caf::behavior answering_device(caf::event_based_actor*, int index, std::shared_ptr<int> got) {
  return {[](atoms::spec_atom, const std::string&, const std::string&) {},
          [index, got](atoms::eval_atom, EvalJob&) {
            ++*got;
            EvalResult r;
            r.status = EvalStatus::ok;
            r.reason = std::to_string(index);
            return r;
          }};
}

// A device that takes a job and never answers (its evaluator hangs, then dies).
caf::behavior silent_device(caf::event_based_actor* self, std::shared_ptr<int> got) {
  return {[](atoms::spec_atom, const std::string&, const std::string&) {},
          [self, got](atoms::eval_atom, EvalJob&) {
            ++*got;
            return self->make_response_promise<EvalResult>();
          }};
}

}  // namespace

CAF_TEST(one job per device at a time and a dead device job goes to another) {
  auto reg = spawn_cluster_registry(sys, {store(), 900, 3});
  auto live_got = std::make_shared<int>(0), silent_got = std::make_shared<int>(0);
  auto silent = sys.spawn(silent_device, silent_got);
  auto live = sys.spawn(answering_device, 0, live_got);
  self->send(reg, atoms::register_atom::value, device_info(1), silent);
  sched.run();  // the registry's own timer is not fired: only messages
  self->send(reg, atoms::register_atom::value, device_info(0), live);
  sched.run();
  using Handle = decltype(self->request(reg, caf::infinite, atoms::eval_atom::value, job(0)));
  std::vector<Handle> handles;
  for (uint64_t n = 1; n <= 4; ++n)
    handles.push_back(self->request(reg, caf::infinite, atoms::eval_atom::value, job(n)));
  sched.run();
  // The silent device holds one job; the live one did the other three, one at a time.
  CAF_CHECK_EQUAL(*silent_got, 1);
  CAF_CHECK_EQUAL(*live_got, 3);
  // Its evaluator dies: the job it held is re-queued and answered by the live device.
  self->send_exit(silent, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(*live_got, 4);
  int answered = 0;
  for (auto& h : handles) {
    EvalResult r = answer<EvalResult>(h);
    CAF_CHECK_EQUAL(r.status, EvalStatus::ok);
    CAF_CHECK_EQUAL(r.reason, "0");
    ++answered;
  }
  CAF_CHECK_EQUAL(answered, 4);
  // The registry re-arms its timer forever: stop it before the fixture runs what is left.
  self->send_exit(reg, caf::exit_reason::user_shutdown);
  self->send_exit(live, caf::exit_reason::user_shutdown);
  sched.run();
}

CAF_TEST_FIXTURE_SCOPE_END()
