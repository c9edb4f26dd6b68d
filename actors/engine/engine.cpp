#include "actors/protocol/run_search.hpp"

#include <iostream>
#include <thread>

#include "actors/build/build_farm.hpp"
#include "actors/cluster/cluster_registry.hpp"
#include "actors/cluster/peer_bridge.hpp"
#include "actors/dashboard/console_link.hpp"
#include "actors/device/device_registry.hpp"
#include "actors/engine/engine_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "backends/device_info.hpp"
#include "runtime/records/backend_kind.hpp"
#include "runtime/core/log.hpp"

namespace kevolve {

namespace {

// A search pinned to a device class can only run here when this machine has such a device.
Status check_device_class(const RunConfig& config) {
  if (config.device_class.empty()) return Status::success();
  const std::string here = local_device_class(config.backend, 0);
  if (here.find(config.device_class) != std::string::npos) return Status::success();
  return Status::failure(Errc::unavailable, config.file + ": [search] device_class = \"" + config.device_class +
                                                "\" matches no device of this machine (its " + config.backend +
                                                " device is \"" + here +
                                                "\"); a node routes such a search to matching evaluators");
}

// Stops the shared actors spawned so far (a start that failed half-way).
void stop_shared(EngineShared& sh) {
  for (auto h : {caf::actor_cast<caf::actor>(sh.cluster), caf::actor_cast<caf::actor>(sh.builds), caf::actor_cast<caf::actor>(sh.store_hdl),
                 caf::actor_cast<caf::actor>(sh.devices)})
    if (h) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

// The node's only listening socket (runtime/net/cluster_link.hpp): each connection that proves its role's
// key gets a bridge actor that may only deliver that role's messages to the registry (peer_bridge.hpp). No
// CAF network layer is loaded at all, so nothing on this machine speaks CAF's protocol. On failure the
// actors spawned so far are stopped.
Expected<std::unique_ptr<net::Listener>> open_node(caf::actor_system& sys, EngineShared& sh, const ClusterOptions& cl) {
  using R = Expected<std::unique_ptr<net::Listener>>;
  sh.cluster = spawn_cluster_registry(sys, {sh.store, cl.eval_timeout_s});
  sh.devices = caf::actor_cast<device_actor>(sh.cluster);
  net::ListenOptions lo;
  lo.host = cl.host;
  lo.port = cl.port;
  lo.keys = cl.keys;
  lo.tls = cl.tls;
  lo.limits.heartbeat_s = cl.heartbeat_s;
  lo.limits.max_frame_bytes = 16u << 20;  // evaluators send verdicts and consoles commands: never this large
  lo.on_link = [&sys, registry = caf::actor_cast<caf::actor>(sh.cluster)](std::shared_ptr<net::Link> link) {
    return cluster::bridge_link(sys, std::move(link), registry);
  };
  auto listener = net::listen(std::move(lo));
  if (!listener) {
    stop_shared(sh);
    return R::failure(Errc::unavailable, listener.error());
  }
  if (cl.on_listening) cl.on_listening((*listener)->port());
  return listener;
}

// The web dashboard, asking the console's questions of the cluster registry: the node's, or in a local run
// one spawned to answer the console only (its device list stays empty). On failure the shared actors stop.
Expected<std::unique_ptr<dashboard::Server>> open_dashboard(caf::actor_system& sys, EngineShared& sh,
                                                            const dashboard::ServerOptions& o) {
  using R = Expected<std::unique_ptr<dashboard::Server>>;
  if (!sh.cluster) sh.cluster = spawn_cluster_registry(sys, {sh.store, 900});
  auto server = dashboard::open_server(o, dashboard::console_link(sys, caf::actor_cast<caf::actor>(sh.cluster)));
  if (!server) {
    stop_shared(sh);
    return R::failure(server.status());
  }
  log::info("") << "dashboard on " << ((*server)->tls() ? "https" : "http") << "://" << o.host << ":"
            << (*server)->port() << "/";
  return server;
}

}  // namespace

Expected<SearchStatus> run_search(const RunConfig& config, const ProblemSpec& spec, std::shared_ptr<Operator> op,
                                  const EngineOptions& options) {
  using R = Expected<SearchStatus>;
  const ClusterOptions* cl = options.cluster;
  if (!cl)
    if (auto ok = check_device_class(config); !ok) return R::failure(ok);
  auto opened = Store::open(config.store);
  if (!opened) return R::failure(opened.status());
  std::shared_ptr<Store> store = std::move(*opened);
  auto first = load_search(store, config, spec, *op);
  if (!first) return R::failure(first.status());
  // Paused from the console or the dashboard before it stopped: a node or a served run keeps it paused (it
  // is resumed there); a plain run has nothing to resume it from, so it runs again, and says so.
  if (first->plan.record.paused && !first->plan.record.finished) {
    if (cl || options.dashboard) {
      log::info("") << "search " << config.search_id
                << " was paused before it stopped and stays paused: resume it from the console or the dashboard";
    } else {
      log::info("") << "search " << config.search_id
                << " was paused from the console before it stopped; this run resumes it\n";
      first->plan.record.paused = false;
    }
  }
  const bool more_to_do = cl && (!cl->more.empty() || cl->stay);
  if (first->plan.record.finished && !more_to_do)
    return stored_status(*first);  // nothing to do: report what is stored

  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  cfg.set("scheduler.max-threads", static_cast<size_t>(std::max(2u, std::thread::hardware_concurrency())));
  caf::actor_system sys{cfg};

  EngineStart start;
  EngineShared& sh = start.shared;
  sh.store = store;
  sh.store_path = config.store;
  sh.backend = config.backend;
  sh.checkpoints = config.store + ".checkpoints";
  clean_partial_checkpoints(sh.checkpoints);
  sh.store_hdl = spawn_store_actor(sys, store, sh.checkpoints, config.checkpoint_seconds);
  const int build_workers = config.build_workers > 0
                                ? config.build_workers
                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  sh.builds = spawn_build_farm(sys, build_workers, backend_traits(config.backend).evaluates);
  std::unique_ptr<net::Listener> door;  // closed when the engine returns
  if (cl) {
    auto opened_door = open_node(sys, sh, *cl);
    if (!opened_door) return R::failure(opened_door.status());
    door = std::move(*opened_door);
  } else {
    sh.devices =
        spawn_device_registry(sys, {config.backend, config.devices, config.null_delay_ms, config.null_ledger, "", ""});
  }
  std::unique_ptr<dashboard::Server> dash;  // closed before the actor system goes
  if (options.dashboard) {
    auto opened_dash = open_dashboard(sys, sh, *options.dashboard);
    if (!opened_dash) return R::failure(opened_dash.status());
    dash = std::move(*opened_dash);
  }
  if (first->plan.record.finished) {
    start.first_stored = stored_status(*first);
  } else {
    start.first = std::move(*first);
    start.first_op = std::move(op);
  }
  start.options = options;
  auto outcome = start.outcome = std::make_shared<EngineOutcome>();
  spawn_engine_actor(sys, std::move(start));
  sys.await_all_actors_done();
  dash.reset();
  if (outcome->interrupted) return R::failure("interrupted; run the same command again to resume the search");
  if (!outcome->first.save_error.empty())
    return R::failure(Errc::io, "search " + config.search_id + " ended (" + outcome->first.stop_reason +
                                    ") but the store could not save all of it: " + outcome->first.save_error);
  return outcome->first;
}

}  // namespace kevolve
