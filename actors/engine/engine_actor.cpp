#include "actors/engine/engine_actor.hpp"

#include <iostream>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "actors/deep_search/deep_search_actor.hpp"
#include "actors/memory/memory_actor.hpp"
#include "actors/operator/operator_actor.hpp"
#include "actors/search/search_actor.hpp"
#include "runtime/records/backend_kind.hpp"
#include "runtime/records/records_codec.hpp"
#include "runtime/core/log.hpp"

namespace kevolve {
namespace {

// The actors of one running search.
struct RunningSearch {
  RunConfig config;
  ProblemSpec spec;
  search_actor search;
  operator_actor op;
  memory_actor memory;
  deep_search_actor deep;
  SearchStatus last;
  bool first = false;  // the caller's own search (its report is the caller's to write)
  bool done = false;
};

struct EngineState {
  EngineShared sh;
  EngineOptions options;
  std::shared_ptr<EngineOutcome> outcome;
  std::vector<std::shared_ptr<RunningSearch>> runs;
  bool closing = false;
  int flushing = 0;  // searches whose context memory is being made durable
  int ticks = 0;
  static inline const char* name = "engine";
};

using Self = engine_actor::stateful_pointer<EngineState>;

const ClusterOptions* cluster_options(Self self) { return self->state.options.cluster; }

void start_search(Self self, LoadedSearch loaded, std::shared_ptr<Operator> op, bool first) {
  auto& sh = self->state.sh;
  auto& sys = self->system();
  auto r = std::make_shared<RunningSearch>();
  SearchSetup setup(std::move(loaded.plan));
  r->config = setup.config;
  r->spec = setup.spec;
  r->first = first;
  r->last.search = setup.config.search_id;
  // The deep-search agent serves the operator's knowledge base (the LLM operator's), when it has one.
  if (auto kb = op->knowledge_base()) r->deep = spawn_deep_search_actor(sys, kb);
  // Held once, by the search's graph and its operator's; backed by the store's parameter keys, so that only
  // the points not yet committed stay in memory (a failed lookup answers "not held": at worst one point is
  // evaluated twice).
  setup.params = std::make_shared<ParamIndex>([store = sh.store, id = setup.record.id](uint64_t h) {
    auto held = store->has_params(id, h);
    return held && *held;
  });
  r->op = spawn_operator_actor(sys, std::move(op), r->deep, {setup.record.id, setup.params});
  wire::Writer w;
  encode(w, r->spec);
  self->send(sh.devices, atoms::spec_atom::value, r->config.problem, std::string(w.bytes().begin(), w.bytes().end()));
  setup.store = sh.store_hdl;
  setup.op = r->op;
  setup.builds = sh.builds;
  setup.devices = sh.devices;
  setup.watcher = self;
  if (backend_traits(r->config.backend).evaluates)  // the null backend measures the engine alone
    setup.memory = spawn_memory_actor(sys, {r->spec, r->config.backend, loaded.lessons, sh.store_hdl, sh.store});
  r->memory = setup.memory;
  r->search = spawn_search_actor(sys, std::move(setup));
  if (sh.cluster) self->send(sh.cluster, atoms::watch_atom::value, caf::actor_cast<caf::actor>(r->search));
  self->state.runs.push_back(std::move(r));
}

// A node's further search (at start, or submitted from the console: `submitted`, recorded so that a
// restarted node resumes it): "started ..." or why it was not started.
ActionReply add_search(Self self, PreparedSearch p, bool submitted) {
  auto& st = self->state;
  p.config.store = st.sh.store_path;
  if (p.config.backend != st.sh.backend)
    return ActionReply::refused(Errc::invalid_argument, "search " + p.config.search_id + " uses the " +
                                                            p.config.backend + " backend; this node's searches use " +
                                                            st.sh.backend);
  for (auto& r : st.runs)
    if (r->config.search_id == p.config.search_id && !r->done)
      return ActionReply::refused(Errc::busy, "search " + p.config.search_id + " is already running");
  auto l = load_search(st.sh.store, p.config, p.spec, *p.op);
  if (!l) return ActionReply::refused(l.status());
  if (l->plan.record.finished)
    return ActionReply::refused(
        Errc::invalid_argument,
        "search " + p.config.search_id + " is finished in this node's store (" + l->plan.record.stop_reason + ")");
  const std::string what = "search " + p.config.search_id + " on " + p.spec.name + " (" + p.config.backend + ")";
  l->plan.record.submitted = l->plan.record.submitted || submitted;
  start_search(self, std::move(*l), p.op, false);
  return ActionReply::done("started " + what);
}

// Once closing and every search's memory is durable: stops the shared actors, then the engine.
void maybe_quit(Self self) {
  auto& st = self->state;
  if (!st.closing || st.flushing > 0) return;
  for (auto h : {caf::actor_cast<caf::actor>(st.sh.builds), caf::actor_cast<caf::actor>(st.sh.devices),
                 caf::actor_cast<caf::actor>(st.sh.cluster)})
    if (h) self->send_exit(h, caf::exit_reason::user_shutdown);
  // The store actor flushes what it holds when it exits.
  self->send_exit(st.sh.store_hdl, caf::exit_reason::user_shutdown);
  self->quit();
}

// Makes the search's context memory durable, then stops its actors.
void end_search(Self self, const std::shared_ptr<RunningSearch>& r) {
  r->done = true;
  auto stop_actors = [self, r] {
    for (auto h : {caf::actor_cast<caf::actor>(r->search), caf::actor_cast<caf::actor>(r->op),
                   caf::actor_cast<caf::actor>(r->memory), caf::actor_cast<caf::actor>(r->deep)})
      if (h) self->send_exit(h, caf::exit_reason::user_shutdown);
  };
  if (!r->memory) return stop_actors();
  ++self->state.flushing;
  auto done = [self, stop_actors](const Status& saved) {
    if (!saved) log::warn("") << "memory: not saved: " << saved.message ;
    stop_actors();
    --self->state.flushing;
    maybe_quit(self);
  };
  self->request(r->memory, std::chrono::seconds(60), atoms::flush_atom::value)
      .then([done](Status& saved) { done(saved); },
            [done, self](caf::error& e) { done(Status::failure(Errc::unavailable, self->system().render(e))); });
}

void close(Self self) {
  auto& st = self->state;
  if (st.closing) return;
  st.closing = true;
  for (auto& r : st.runs)
    if (!r->done) end_search(self, r);
  maybe_quit(self);
}

void on_progress(Self self, SearchStatus& s) {
  auto& st = self->state;
  std::shared_ptr<RunningSearch> r;
  for (auto& x : st.runs)
    if (!x->done && x->config.search_id == s.search) r = x;
  if (!r) return;  // a push that was on its way when its search ended
  r->last = s;
  if (r->first) st.outcome->first = s;
  if (st.options.progress) st.options.progress(s);
  if (!s.finished || st.closing) return;
  end_search(self, r);
  // Reports: the caller writes the first search's (a node that stays: as it ends, like the others, since
  // such a node only ever ends by a signal); a node's other searches are written as they end.
  const ClusterOptions* cl = cluster_options(self);
  if (cl && cl->on_finished && (!r->first || cl->stay)) cl->on_finished(r->config, r->spec);
  bool all_done = true;
  for (auto& x : st.runs) all_done = all_done && x->done;
  if (all_done && !(cl && cl->stay)) close(self);
}

void on_tick(Self self) {
  auto& st = self->state;
  if (st.closing) return;
  const EngineOptions& o = st.options;
  if (o.checkpoint_now && o.checkpoint_now->exchange(false)) {
    const auto stamp =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    self->request(st.sh.store_hdl, std::chrono::seconds(60), atoms::ckpt_atom::value,
                  st.sh.checkpoints + "/" + std::to_string(stamp))
        .then(
            [](Status& made) {
              if (made)
                log::info("") << "checkpoint " << made.message ;
              else
                log::warn("") << "checkpoint failed: " << made.message ;
            },
            [self](caf::error& e) {
              log::warn("") << "checkpoint failed: " << self->system().render(e) ;
            });
  }
  if (o.interrupted && o.interrupted->load()) {
    st.outcome->interrupted = true;
    return close(self);
  }
#ifdef __GLIBC__
  // Every 5 s, the free pages of glibc's heaps go back to the system: nodes are made on one thread and freed
  // on another, and without this the heaps' free holes keep the process's size at its longest history.
  if (++st.ticks % 50 == 0) malloc_trim(0);
#endif
  self->delayed_send(self, std::chrono::milliseconds(100), atoms::tick_atom::value);
}

engine_actor::behavior_type engine(Self self, EngineStart start) {
  auto& st = self->state;
  st.sh = std::move(start.shared);
  st.options = std::move(start.options);
  st.outcome = std::move(start.outcome);
  st.outcome->first = start.first_stored;
  const ClusterOptions* cl = cluster_options(self);
  if (cl) {
    // The node's network-facing actors: should either end, the node stops loudly (resumable), never
    // serves on silently without them.
    self->monitor(st.sh.cluster);
    self->set_down_handler([self](caf::down_msg& dm) {
      auto& st = self->state;
      const bool registry = dm.source == caf::actor_cast<caf::actor_addr>(st.sh.cluster);
      if (!registry || st.closing) return;
      log::warn("node") <<  "the cluster registry" << " stopped ("
                << to_string(dm.reason) << "); stopping the node (the same command resumes it)\n";
      st.outcome->interrupted = true;
      close(self);
    });
    self->send(st.sh.cluster, atoms::engine_atom::value, caf::actor_cast<caf::actor>(self));
  }
  if (start.first) start_search(self, std::move(*start.first), start.first_op, true);
  if (cl)
    for (auto& p : cl->more) log::info("node") << add_search(self, p, p.submitted).line();
  self->send(self, atoms::tick_atom::value);
  if (st.runs.empty() && !(cl && cl->stay)) close(self);  // nothing to run (cannot happen for `kevolve run`)
  return {
      [self](atoms::progress_atom, SearchStatus& s) { on_progress(self, s); },
      [self](atoms::submit_atom, const std::string& path) -> ActionReply {
        const ClusterOptions* cl = cluster_options(self);
        if (self->state.closing) return ActionReply::refused(Errc::unavailable, "this node is stopping");
        if (!cl || !cl->prepare) return ActionReply::refused(Errc::unavailable, "this node cannot prepare searches");
        auto p = cl->prepare(path);
        if (!p) return ActionReply::refused(p.code(), path + ": " + p.error());
        ActionReply r = add_search(self, std::move(*p), true);
        log::info("node") << "submit " << path << ": " << r.line();
        return r;
      },
      [self](atoms::tick_atom) { on_tick(self); },
  };
}

}  // namespace

engine_actor spawn_engine_actor(caf::actor_system& sys, EngineStart start) {
  return sys.spawn<caf::detached>(engine, std::move(start));
}

}  // namespace kevolve
