#include "runtime/records/backend_kind.hpp"
#include "actors/engine/engine.hpp"

#include <iostream>
#include <thread>

#include <caf/io/all.hpp>

#include "actors/build/build_farm.hpp"
#include "actors/cluster/cluster_registry.hpp"
#include "actors/cluster/gatekeeper.hpp"
#include "actors/device/device_registry.hpp"
#include "actors/deep_search/deep_search_actor.hpp"
#include "actors/memory/memory_actor.hpp"
#include "knowledge/hardware_profile.hpp"
#include "actors/operator/operator_actor.hpp"
#include "actors/search/search_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/cluster/front_door.hpp"
#include "backends/build_target.hpp"
#include "backends/device_info.hpp"
#include "runtime/records/records_codec.hpp"

namespace kevolve {

void configure_network(caf::actor_system_config& cfg, double heartbeat_s) {
  cfg.load<caf::io::middleman>();
  const auto hb = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(heartbeat_s));
  cfg.set("middleman.heartbeat-interval", hb);
  cfg.set("middleman.connection-timeout", hb * 5);
}

namespace {

// A search as the store has it, ready for its actors: the record (new or resumed), its nodes, the sources
// of unscored nodes, contexts for operators that want them; the lessons earlier searches left (and the
// operator warm-started from them when the search is new).
struct LoadedSearch {
  SearchSetup setup;
  Lessons lessons;
};

Expected<LoadedSearch> load_search(Store& store, const RunConfig& config, const ProblemSpec& spec, Operator& op) {
  using R = Expected<LoadedSearch>;
  LoadedSearch l;
  // The context memory of this problem on this backend and hardware, as earlier searches left it.
  std::string note;
  l.lessons = recall_lessons(
      store, lessons_key(spec.name, config.backend, resolve_hardware(config.backend, config.hardware)), &note);
  if (!note.empty()) std::cerr << "kevolve: memory: " << note << " (starting without it)\n";
  const bool is_new = !store.search(config.search_id);
  if (l.lessons.evaluated() > 0 && backend_traits(config.backend).evaluates) {
    std::cerr << "kevolve: memory: " << l.lessons.summary() << "\n";
    if (is_new && config.warm_start)
      if (auto how = op.warm_start(l.lessons); !how.empty()) std::cerr << "kevolve: warm start: " << how << "\n";
  }
  SearchSetup& setup = l.setup;
  setup.keep_context = op.needs_context();
  setup.config = config;
  setup.config.strategy.repair = op.can_repair();  // failed nodes go back to operators that can fix them
  setup.spec = spec;
  if (auto existing = store.search(config.search_id)) {
    if (existing->problem != spec.name)
      return R::failure("store " + config.store + ": search '" + config.search_id + "' is for problem '" +
                        existing->problem + "', not '" + spec.name + "' (choose another [search] id or store)");
    setup.record = *existing;
    setup.nodes = store.nodes(config.search_id);
    if (op.needs_context())
      for (auto& n : setup.nodes) {
        NodeContext& c = setup.contexts[n.id];
        c.id = n.id;
        if (auto src = store.artifact(config.search_id, n.id, "source")) c.source = *src;
        auto log = store.artifact(config.search_id, n.id, "compile_log");
        auto rep = store.artifact(config.search_id, n.id, "report");
        c.report = n.status == EvalStatus::compile_error && log ? *log : (rep ? *rep : "");
      }
    for (auto& n : setup.nodes)
      if (!n.scored()) {
        auto src = store.artifact(config.search_id, n.id, "source");
        Candidate c;
        c.source = src ? *src : std::string();
        c.entry = spec.entry;
        c.parameters = n.params;
        c.provenance = "resumed";
        setup.unfinished[n.id] = c;
      }
  } else {
    setup.record.id = config.search_id;
    setup.record.problem = spec.name;
    setup.record.strategy = config.strategy.name;
    setup.record.config_text = config.text;
  }
  return l;
}

// The status of a search the store holds as finished.
SearchStatus stored_status(const SearchSetup& setup) {
  SearchStatus s;
  s.search = setup.record.id;
  s.finished = true;
  s.stop_reason = setup.record.stop_reason;
  for (auto& n : setup.nodes)
    if (n.scored()) {
      ++s.evaluated;
      if (n.correct())
        ++s.correct;
      else
        ++s.failed;
      if (n.correct() && n.fitness > s.best_fitness) {
        s.best_fitness = n.fitness;
        s.best_node = n.id;
      }
    }
  return s;
}

// What every search of one engine shares: the store, the compile farm, the devices (local registry or
// the cluster registry).
struct Shared {
  caf::actor_system& sys;
  std::shared_ptr<Store> store;
  store_actor store_hdl;
  build_actor builds;
  device_actor devices;
  cluster_registry_actor cluster;
};

// The actors of one running search.
struct RunningSearch {
  RunConfig config;
  ProblemSpec spec;
  search_actor search;
  operator_actor op;
  memory_actor memory;
  deep_search_actor deep;
  SearchStatus last;
  bool done = false;
};

RunningSearch start_search(Shared& sh, LoadedSearch loaded, std::shared_ptr<Operator> op) {
  RunningSearch r;
  SearchSetup& setup = loaded.setup;
  r.config = setup.config;
  r.spec = setup.spec;
  // The deep-search agent serves the operator's knowledge base (the LLM operator's), when it has one.
  if (auto kb = op->knowledge_base()) r.deep = spawn_deep_search_actor(sh.sys, kb);
  r.op = spawn_operator_actor(sh.sys, std::move(op), r.deep);
  wire::Writer w;
  encode(w, r.spec);
  caf::anon_send(sh.devices, atoms::spec_atom::value, r.config.problem,
                 std::string(w.bytes().begin(), w.bytes().end()));
  setup.store = sh.store_hdl;
  setup.op = r.op;
  setup.builds = sh.builds;
  setup.devices = sh.devices;
  if (backend_traits(r.config.backend).evaluates)  // the null backend measures the engine alone
    setup.memory = spawn_memory_actor(sh.sys, {r.spec, r.config.backend, loaded.lessons, sh.store_hdl, sh.store});
  r.memory = setup.memory;
  r.search = spawn_search_actor(sh.sys, std::move(setup));
  if (sh.cluster) caf::anon_send(sh.cluster, atoms::start_atom::value, caf::actor_cast<caf::actor>(r.search));
  return r;
}

// Makes the search's context memory durable, then stops its actors.
void stop_search(caf::scoped_actor& self, RunningSearch& r) {
  if (r.memory)
    self->request(r.memory, std::chrono::seconds(60), atoms::flush_atom::value)
        .receive(
            [](bool) {},
            [&](caf::error& e) { std::cerr << "kevolve: memory: not saved: " << self->system().render(e) << "\n"; });
  for (auto h : {caf::actor_cast<caf::actor>(r.search), caf::actor_cast<caf::actor>(r.op),
                 caf::actor_cast<caf::actor>(r.memory), caf::actor_cast<caf::actor>(r.deep)})
    if (h) self->send_exit(h, caf::exit_reason::user_shutdown);
  r.done = true;
}

}  // namespace

Expected<SearchStatus> run_search(const RunConfig& config, const ProblemSpec& spec, std::shared_ptr<Operator> op,
                                  const EngineOptions& options) {
  using R = Expected<SearchStatus>;
  const ClusterOptions* cl = options.cluster;
  if (!cl && !config.device_class.empty()) {
    const std::string here = local_device_class(config.backend, 0);
    if (here.find(config.device_class) == std::string::npos)
      return R::failure(config.file + ": [search] device_class = \"" + config.device_class +
                        "\" matches no device of this machine (its " + config.backend + " device is \"" + here +
                        "\"); a node routes such a search to matching evaluators");
  }
  auto opened = Store::open(config.store);
  if (!opened) return R::failure(opened.error());
  std::shared_ptr<Store> store = std::move(*opened);
  auto first = load_search(*store, config, spec, *op);
  if (!first) return R::failure(first.error());
  const bool more_to_do = cl && (!cl->more.empty() || cl->stay);
  if (first->setup.record.finished && !more_to_do)
    return stored_status(first->setup);  // nothing to do: report what is stored

  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  cfg.set("scheduler.max-threads", static_cast<size_t>(std::max(2u, std::thread::hardware_concurrency())));
  if (cl) configure_network(cfg, cl->heartbeat_s);
  caf::actor_system sys{cfg};

  const std::string checkpoints = config.store + ".checkpoints";
  clean_partial_checkpoints(checkpoints);
  Shared sh{sys, store, spawn_store_actor(sys, store, checkpoints, config.checkpoint_seconds), {}, {}, {}};
  const int build_workers = config.build_workers > 0
                                ? config.build_workers
                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  sh.builds = spawn_build_farm(sys, build_workers, backend_traits(config.backend).evaluates);
  gatekeeper_actor gate;
  std::unique_ptr<cluster::FrontDoor> door;  // closed when the engine returns
  if (cl) {
    sh.cluster = spawn_cluster_registry(sys, {store, cl->eval_timeout_s});
    sh.devices = caf::actor_cast<device_actor>(sh.cluster);
    gate = spawn_gatekeeper(sys, cl->secret, caf::actor_cast<caf::actor>(sh.cluster));
    // CAF listens on loopback only; the front door is what the network sees (actors/cluster/front_door.hpp).
    auto port = sys.middleman().publish(gate, 0, "127.0.0.1", true);
    std::string door_error;
    if (port) {
      auto d = cluster::open_front_door({cl->host, cl->port, *port, cl->secret, cl->tls});
      if (d)
        door = std::move(*d);
      else
        door_error = d.error();
    } else {
      door_error = "cannot listen on 127.0.0.1 for the node's own actors: " + sys.render(port.error());
    }
    if (!door) {
      for (auto h : {caf::actor_cast<caf::actor>(sh.cluster), caf::actor_cast<caf::actor>(gate),
                     caf::actor_cast<caf::actor>(sh.builds), caf::actor_cast<caf::actor>(sh.store_hdl)})
        if (h) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
      return R::failure(door_error);
    }
    if (cl->on_listening) cl->on_listening(door->port());
  } else {
    sh.devices =
        spawn_device_registry(sys, {config.backend, config.devices, config.null_delay_ms, config.null_ledger, "", ""});
  }

  std::vector<RunningSearch> runs;
  const bool first_started = !first->setup.record.finished;
  const SearchStatus first_stored = first->setup.record.finished ? stored_status(first->setup) : SearchStatus{};
  if (first_started) runs.push_back(start_search(sh, std::move(*first), op));
  // A node's further searches: each is loaded from the node's store and shares its farm and devices.
  auto add = [&](PreparedSearch p) -> std::string {
    p.config.store = config.store;
    if (p.config.backend != config.backend)
      return "error: search " + p.config.search_id + " uses the " + p.config.backend +
             " backend; this node's searches use " + config.backend;
    for (auto& r : runs)
      if (r.config.search_id == p.config.search_id && !r.done)
        return "error: search " + p.config.search_id + " is already running";
    auto l = load_search(*store, p.config, p.spec, *p.op);
    if (!l) return "error: " + l.error();
    if (l->setup.record.finished)
      return "error: search " + p.config.search_id + " is finished in this node's store (" +
             l->setup.record.stop_reason + ")";
    const std::string what = "search " + p.config.search_id + " on " + p.spec.name + " (" + p.config.backend + ")";
    runs.push_back(start_search(sh, std::move(*l), p.op));
    return "started " + what;
  };
  if (cl)
    for (auto& p : cl->more) std::cerr << "kevolve node: " << add(p) << "\n";

  SearchStatus last = first_stored;
  bool interrupted = false;
  {
    caf::scoped_actor self{sys};
    if (sh.cluster) caf::anon_send(sh.cluster, atoms::submit_atom::value, caf::actor_cast<caf::actor>(self));
    // The node's network-facing actors: should either end, the node stops loudly (resumable), never
    // serves on silently without them.
    std::string cluster_down;
    if (cl) {
      self->monitor(sh.cluster);
      self->monitor(gate);
    }
    for (;;) {
      for (size_t i = 0; i < runs.size(); ++i) {
        RunningSearch& r = runs[i];
        if (r.done) continue;
        self->request(r.search, std::chrono::seconds(10), atoms::status_atom::value)
            .receive([&](SearchStatus s) { r.last = std::move(s); }, [&](caf::error&) {});
        if (options.progress) options.progress(r.last);
        if (!r.last.finished) continue;
        stop_search(self, r);
        // Reports: the caller writes the first search's (a node that stays: as it ends, like the others,
        // since such a node only ever ends by a signal); a node's others are written as they end.
        if ((!(first_started && i == 0) || (cl && cl->stay)) && cl && cl->on_finished)
          cl->on_finished(r.config, r.spec);
      }
      if (first_started) last = runs.front().last;
      if (options.checkpoint_now && options.checkpoint_now->exchange(false)) {
        const auto stamp =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        self->request(sh.store_hdl, std::chrono::seconds(60), atoms::ckpt_atom::value,
                      checkpoints + "/" + std::to_string(stamp))
            .receive([&](std::string& made) { std::cerr << "\nkevolve: checkpoint " << made << "\n"; },
                     [&](caf::error& e) { std::cerr << "\nkevolve: checkpoint failed: " << sys.render(e) << "\n"; });
      }
      // The console's `submit PATH`, relayed by the cluster registry.
      if (cl)
        self->receive(
            [&](atoms::submit_atom, const std::string& path) -> std::string {
              if (!cl->prepare) return "error: this node cannot prepare searches";
              auto p = cl->prepare(path);
              if (!p) return "error: " + path + ": " + p.error();
              std::string r = add(std::move(*p));
              std::cerr << "kevolve node: submit " << path << ": " << r << "\n";
              return r;
            },
            [&](caf::down_msg& dm) {
              cluster_down =
                  (dm.source == caf::actor_cast<caf::actor_addr>(gate) ? "the gatekeeper" : "the cluster registry");
              cluster_down += " stopped (" + to_string(dm.reason) + ")";
            },
            caf::after(std::chrono::milliseconds(0)) >> [] {});
      if (!cluster_down.empty()) {
        std::cerr << "\nkevolve node: " << cluster_down << "; stopping the node (the same command resumes it)\n";
        interrupted = true;
        break;
      }
      bool all_done = true;
      for (auto& r : runs) all_done = all_done && r.done;
      if (all_done && !(cl && cl->stay)) break;
      if (options.interrupted && options.interrupted->load()) {
        interrupted = true;
        break;
      }
      for (int i = 0; i < 5 && !(options.interrupted && options.interrupted->load()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (auto& r : runs)
      if (!r.done) stop_search(self, r);
    // Shut down: the store actor flushes what it holds when it exits.
    for (auto h : {caf::actor_cast<caf::actor>(sh.builds), caf::actor_cast<caf::actor>(sh.devices),
                   caf::actor_cast<caf::actor>(gate)})
      if (h) self->send_exit(h, caf::exit_reason::user_shutdown);
    self->send_exit(sh.store_hdl, caf::exit_reason::user_shutdown);
  }
  sys.await_all_actors_done();
  if (interrupted) return R::failure("interrupted; run the same command again to resume the search");
  return last;
}

}  // namespace kevolve
