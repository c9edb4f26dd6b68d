#include "actors/engine/engine.hpp"

#include <iostream>
#include <thread>

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

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
#include "runtime/records_codec.hpp"

namespace kevolve {

void configure_network(caf::actor_system_config& cfg, double heartbeat_s, const TlsFiles& tls) {
  cfg.load<caf::io::middleman>();
  auto hb = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(heartbeat_s));
  auto timeout = hb * 5;
  if (tls.on()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.ca;
    // CAF 0.17's OpenSSL transport hands on a record left in OpenSSL's buffer only at the next network
    // event (measured: 2.6 messages/s with 0.5 s heartbeats, and a heartbeat stuck long enough to drop the
    // connection). Heartbeats every 20 ms keep messages flowing; the cut is still noticed within seconds.
    hb = std::min<caf::timespan>(hb, std::chrono::milliseconds(20));
    timeout = std::max<caf::timespan>(timeout, std::chrono::seconds(5));
  }
  cfg.set("middleman.heartbeat-interval", hb);
  cfg.set("middleman.connection-timeout", timeout);
}

Expected<SearchStatus> run_search(const RunConfig& config, const ProblemSpec& spec, std::shared_ptr<Operator> op,
                                  const EngineOptions& options) {
  using R = Expected<SearchStatus>;
  auto opened = Store::open(config.store);
  if (!opened) return R::failure(opened.error());
  std::shared_ptr<Store> store = std::move(*opened);

  // The context memory of this problem on this backend and hardware, as earlier searches left it.
  std::string note;
  Lessons lessons = recall_lessons(*store, lessons_key(spec.name, config.backend, resolve_hardware(config.backend, config.hardware)), &note);
  if (!note.empty()) std::cerr << "kevolve: memory: " << note << " (starting without it)\n";
  const bool is_new = !store->search(config.search_id);
  if (lessons.evaluated() > 0 && config.backend != "null") {
    std::cerr << "kevolve: memory: " << lessons.summary() << "\n";
    if (is_new && config.warm_start)
      if (auto how = op->warm_start(lessons); !how.empty()) std::cerr << "kevolve: warm start: " << how << "\n";
  }

  SearchSetup setup;
  setup.keep_context = op->needs_context();
  setup.config = config;
  setup.config.strategy.repair = op->can_repair();  // failed nodes go back to operators that can fix them
  setup.spec = spec;
  if (auto existing = store->search(config.search_id)) {
    if (existing->problem != spec.name)
      return R::failure("store " + config.store + ": search '" + config.search_id + "' is for problem '" + existing->problem +
                        "', not '" + spec.name + "' (choose another [search] id or store)");
    setup.record = *existing;
    setup.nodes = store->nodes(config.search_id);
    if (op->needs_context())
      for (auto& n : setup.nodes) {
        NodeContext& c = setup.contexts[n.id];
        c.id = n.id;
        if (auto src = store->artifact(config.search_id, n.id, "source")) c.source = *src;
        auto log = store->artifact(config.search_id, n.id, "compile_log");
        auto rep = store->artifact(config.search_id, n.id, "report");
        c.report = n.status == EvalStatus::compile_error && log ? *log : (rep ? *rep : "");
      }
    for (auto& n : setup.nodes)
      if (!n.scored()) {
        auto src = store->artifact(config.search_id, n.id, "source");
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
  if (setup.record.finished) {  // nothing to do: report what is stored
    SearchStatus s;
    s.search = config.search_id;
    s.finished = true;
    s.stop_reason = setup.record.stop_reason;
    for (auto& n : setup.nodes)
      if (n.scored()) {
        ++s.evaluated;
        if (n.correct()) ++s.correct; else ++s.failed;
        if (n.correct() && n.fitness > s.best_fitness) { s.best_fitness = n.fitness; s.best_node = n.id; }
      }
    return s;
  }

  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  cfg.set("scheduler.max-threads", static_cast<size_t>(std::max(2u, std::thread::hardware_concurrency())));
  if (options.cluster) configure_network(cfg, options.cluster->heartbeat_s, options.cluster->tls);
  caf::actor_system sys{cfg};

  const std::string checkpoints = config.store + ".checkpoints";
  clean_partial_checkpoints(checkpoints);
  auto store_hdl = spawn_store_actor(sys, store, checkpoints, config.checkpoint_seconds);
  // The deep-search agent serves the operator's knowledge base (the LLM operator's), when it has one.
  deep_search_actor deep;
  if (auto kb = op->knowledge_base()) deep = spawn_deep_search_actor(sys, kb);
  auto op_hdl = spawn_operator_actor(sys, std::move(op), deep);
  const int build_workers = config.build_workers > 0 ? config.build_workers
                                                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto builds = spawn_build_farm(sys, build_workers, config.backend != "null");
  device_actor devices;
  cluster_registry_actor cluster;
  gatekeeper_actor gate;
  if (options.cluster) {
    cluster = spawn_cluster_registry(sys, {store, options.cluster->eval_timeout_s});
    devices = caf::actor_cast<device_actor>(cluster);
    gate = spawn_gatekeeper(sys, options.cluster->secret, caf::actor_cast<caf::actor>(cluster));
    auto port = options.cluster->tls.on() ? caf::openssl::publish(gate, options.cluster->port, options.cluster->host.c_str(), true)
                                          : sys.middleman().publish(gate, options.cluster->port, options.cluster->host.c_str(), true);
    if (!port) {
      for (auto h : {caf::actor_cast<caf::actor>(cluster), caf::actor_cast<caf::actor>(gate), caf::actor_cast<caf::actor>(op_hdl),
                     caf::actor_cast<caf::actor>(builds), caf::actor_cast<caf::actor>(store_hdl), caf::actor_cast<caf::actor>(deep)})
        if (h) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
      return R::failure("cannot listen on " + options.cluster->host + ":" + std::to_string(options.cluster->port) + ": " + sys.render(port.error()));
    }
    if (options.cluster->on_listening) options.cluster->on_listening(*port);
  } else {
    devices = spawn_device_registry(sys, {config.backend, config.devices, config.null_delay_ms, config.null_ledger});
  }
  wire::Writer w;
  encode(w, spec);
  caf::anon_send(devices, atoms::spec_atom::value, config.problem, std::string(w.bytes().begin(), w.bytes().end()));
  setup.store = store_hdl;
  setup.op = op_hdl;
  setup.builds = builds;
  setup.devices = devices;
  if (config.backend != "null")  // the null backend measures the engine alone
    setup.memory = spawn_memory_actor(sys, {spec, config.backend, lessons, store_hdl, store});
  auto memory_hdl = setup.memory;
  auto search = spawn_search_actor(sys, std::move(setup));
  if (cluster) caf::anon_send(cluster, atoms::start_atom::value, caf::actor_cast<caf::actor>(search));

  SearchStatus last;
  bool interrupted = false;
  {
    caf::scoped_actor self{sys};
    for (;;) {
      self->request(search, std::chrono::seconds(10), atoms::status_atom::value)
          .receive([&](SearchStatus s) { last = std::move(s); }, [&](caf::error&) {});
      if (options.progress) options.progress(last);
      if (options.checkpoint_now && options.checkpoint_now->exchange(false)) {
        const auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
        self->request(store_hdl, std::chrono::seconds(60), atoms::ckpt_atom::value, checkpoints + "/" + std::to_string(stamp))
            .receive([&](std::string& made) { std::cerr << "\nkevolve: checkpoint " << made << "\n"; },
                     [&](caf::error& e) { std::cerr << "\nkevolve: checkpoint failed: " << sys.render(e) << "\n"; });
      }
      if (last.finished) break;
      if (options.interrupted && options.interrupted->load()) { interrupted = true; break; }
      for (int i = 0; i < 5 && !(options.interrupted && options.interrupted->load()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // The context memory makes its lessons and pending diagnoses durable before anything stops.
    if (memory_hdl)
      self->request(memory_hdl, std::chrono::seconds(60), atoms::flush_atom::value)
          .receive([](bool) {}, [&](caf::error& e) { std::cerr << "kevolve: memory: not saved: " << sys.render(e) << "\n"; });
    // Shut down: the store actor flushes what it holds when it exits.
    for (auto h : {caf::actor_cast<caf::actor>(search), caf::actor_cast<caf::actor>(op_hdl), caf::actor_cast<caf::actor>(builds),
                   caf::actor_cast<caf::actor>(devices), caf::actor_cast<caf::actor>(memory_hdl), caf::actor_cast<caf::actor>(deep),
                   caf::actor_cast<caf::actor>(gate)})
      if (h) self->send_exit(h, caf::exit_reason::user_shutdown);
    self->send_exit(store_hdl, caf::exit_reason::user_shutdown);
  }
  sys.await_all_actors_done();
  if (interrupted) return R::failure("interrupted; run the same command again to resume the search");
  return last;
}

}  // namespace kevolve
