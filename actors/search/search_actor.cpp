#include "actors/search/search_actor.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "actors/node/node_actor.hpp"
#include "runtime/core/json.hpp"
#include "runtime/search/termination.hpp"
#include "runtime/core/log.hpp"

namespace kevolve {
namespace {

using Clock = std::chrono::steady_clock;

struct SearchState {
  SearchSetup s;
  std::string load_error;  // the stored nodes could not be read at start: the search stops, saying so
  SearchGraph graph;
  std::unique_ptr<Strategy> strategy;
  Rng rng;
  Clock::time_point started;
  int64_t scored_at_start = 0;  // restored from the store: not this process's work, not in its rate
  int64_t since_best = 0;
  double best = 0;
  int64_t in_flight = 0;  // dispatched to node actors, not yet scored
  uint64_t ticks = 0;     // status ticks (every 250 ms)
  int64_t making = 0;     // proposals at the operator
  int operator_requests = 0;
  int make_failures = 0;               // consecutive proposals that gave no new child
  std::string last_make_error;         // the operator's last error, said when the search stops for it
  std::vector<uint64_t> known_unsent;  // node ids the operator has not been told about
  StoreBatch uncommitted;              // new nodes waiting for the next commit
  StoreBatch verdicts;                 // scored nodes and their artifacts, not yet sent to the store
  std::vector<NodeTask> uncommitted_tasks;
  bool committing = false;
  int64_t committing_tasks = 0;        // nodes in the commit on its way to the store
  std::vector<NodeTask> commit_tasks;  // ... and their tasks, dispatched once it is written
  bool stopping = false;
  bool paused = false;      // from the console: propose nothing new until resumed
  bool cancelling = false;  // cancelled from the console, the record on its way: propose nothing new
  bool finishing = false;   // the final record is on its way to the store
  bool finished = false;    // ... and the store answered (save_error says when it failed)
  std::string stop_reason;
  std::string save_error;
  EvaluatingDevice device;  // the device of the latest verdict that named one (told to the operator)
  node_actor nodes;         // the node runner: evaluates the committed nodes, reports each verdict
  Clock::time_point last_push;
  static inline const char* name = "search";
};

using Self = search_actor::stateful_pointer<SearchState>;

double elapsed(const SearchState& st) {
  return std::chrono::duration<double>(Clock::now() - st.started)
      .count();  // per run: a resumed search starts its clock again
}

SearchStatus status(const SearchState& st) {
  SearchStatus r;
  r.search = st.s.record.id;
  r.evaluated = static_cast<int64_t>(st.graph.scored());
  r.in_flight = st.in_flight + st.making + st.committing_tasks + static_cast<int64_t>(st.uncommitted_tasks.size());
  r.correct = static_cast<int64_t>(st.graph.correct());
  r.failed = r.evaluated - r.correct;
  if (auto b = st.graph.best()) {
    r.best_node = *b;
    r.best_fitness = st.graph.find(*b)->fitness;
  }
  const double t = std::chrono::duration<double>(Clock::now() - st.started).count();
  r.rate = t > 0 ? static_cast<double>(r.evaluated - st.scored_at_start) / t : 0;  // this process's work only
  r.finished = st.finished;
  r.stop_reason = st.stop_reason;
  r.save_error = st.save_error;
  r.paused = st.paused;
  return r;
}

// Tells the watcher (the engine) where the search stands: on every tick, on pause and resume, and
// once when finished.
void push_status(Self self) {
  auto& st = self->state;
  st.last_push = Clock::now();
  if (st.s.watcher) self->send(st.s.watcher, atoms::progress_atom::value, status(st));
}

// Hands committed nodes to the node runner, in one message.
void dispatch(Self self, std::vector<NodeTask> tasks) {
  auto& st = self->state;
  if (tasks.empty()) return;
  st.in_flight += static_cast<int64_t>(tasks.size());
  self->send(st.nodes, atoms::start_atom::value, std::move(tasks));
}

// Once stopping and nothing is in flight: commits the finished record, and is finished when the store
// has answered. A failed commit (or an earlier lost write, which the store reports on every later
// commit) is kept as save_error: the search is over, but not all of it is saved.
void maybe_finish(Self self) {
  auto& st = self->state;
  if (st.finishing || st.finished || !st.stopping || st.in_flight > 0 || st.making > 0 || st.committing ||
      !st.uncommitted_tasks.empty())
    return;
  st.finishing = true;
  st.s.record.finished = true;
  st.s.record.stop_reason = st.stop_reason;
  StoreBatch b = std::move(st.verdicts);
  st.verdicts = StoreBatch{};
  b.searches.push_back(st.s.record);
  auto done = [self](const std::string& error) {
    auto& st = self->state;
    st.finished = true;
    st.save_error = error;
    self->send_exit(st.nodes, caf::exit_reason::user_shutdown);  // nothing in flight: the runner's work is done
    push_status(self);
  };
  self->request(st.s.store, caf::infinite, atoms::commit_atom::value, std::move(b))
      .then([done](Status& ok) { done(ok ? "" : ok.message); },
            [done, self](caf::error& e) { done("the store actor failed: " + self->system().render(e)); });
}

void stop(Self self, const std::string& why) {
  auto& st = self->state;
  if (!st.stopping) {
    st.stopping = true;
    st.stop_reason = why;
  }
  maybe_finish(self);
}

void fill(Self self);
void ask_operator(Self self, std::vector<Proposal> props, std::vector<MakeRequest> batch);

// Verdicts gathered for the store: sent on their own (fire and forget) once this many entries wait.
constexpr size_t kVerdictBatch = 256;

void send_verdicts(Self self) {
  auto& st = self->state;
  if (st.verdicts.empty()) return;
  self->send(st.s.store, atoms::write_atom::value, std::move(st.verdicts));
  st.verdicts = StoreBatch{};
}

// Commits the nodes created since the last commit in one synced batch, then dispatches them.
void commit(Self self) {
  auto& st = self->state;
  if (st.committing || st.uncommitted_tasks.empty()) return;
  st.committing = true;
  st.s.record.rng_state = save_rng(st.rng);
  st.uncommitted.searches.push_back(st.s.record);
  st.commit_tasks = std::move(st.uncommitted_tasks);  // held here, not in the handler: no copy of the tasks
  st.uncommitted_tasks.clear();
  st.committing_tasks = static_cast<int64_t>(st.commit_tasks.size());
  auto batch = std::move(st.uncommitted);
  st.uncommitted = StoreBatch{};
  batch.append(std::move(st.verdicts));  // the verdicts gathered meanwhile go in the same group commit
  self->request(st.s.store, caf::infinite, atoms::commit_atom::value, std::move(batch))
      .then(
          [self](Status& ok) {
            auto& st = self->state;
            st.committing = false;
            st.committing_tasks = 0;
            auto tasks = std::move(st.commit_tasks);
            st.commit_tasks.clear();
            if (!ok) {
              stop(self,
                   "the store refused a write (" + ok.message + "); stopping so that nothing unrecorded is evaluated");
              // Stay proposed, with the children made while this batch was committing: a resume dispatches
              // them. Nothing more is committed, so nothing may wait for a commit either.
              for (auto& t : tasks) st.graph.upsert(t.node);
              for (auto& t : st.uncommitted_tasks) st.graph.upsert(t.node);
              st.uncommitted_tasks.clear();
              st.uncommitted = StoreBatch{};
              maybe_finish(self);
              return;
            }
            dispatch(self, std::move(tasks));
            commit(self);
            fill(self);
          },
          [self](caf::error&) {
            self->state.committing = false;
            self->state.committing_tasks = 0;
            stop(self, "the store actor failed");
          });
}

void on_children(Self self, const std::vector<Proposal>& props, std::vector<MakeReply>& replies) {
  auto& st = self->state;
  st.making -= static_cast<int64_t>(props.size());
  st.operator_requests -= 1;
  std::string stop_reason;  // acted on once this batch's children are queued for commit
  const size_t n_new = std::min(replies.size(), props.size());  // room for them all at once: no regrowth
  st.uncommitted_tasks.reserve(st.uncommitted_tasks.size() + n_new);
  st.uncommitted.nodes.reserve(st.uncommitted.nodes.size() + n_new);
  st.uncommitted.artifacts.reserve(st.uncommitted.artifacts.size() + n_new);
  for (size_t i = 0; i < replies.size() && i < props.size(); ++i) {
    MakeReply& r = replies[i];
    if (!r.stop.empty()) stop_reason = r.stop;
    if (!r.status.ok() || st.graph.has_params(r.params)) {
      ++st.make_failures;
      if (!r.status.ok() && !r.status.message.empty()) st.last_make_error = r.status.message;
      continue;
    }
    st.make_failures = 0;
    NodeRecord n;
    n.id = st.s.record.next_node++;
    n.parents = props[i].parents;
    n.op = props[i].op;
    n.island = props[i].island;
    n.params = std::move(r.params);
    st.graph.upsert(n);
    st.known_unsent.push_back(n.id);
    st.uncommitted.nodes.push_back({st.s.record.id, n});
    st.uncommitted.artifacts.push_back({st.s.record.id, {n.id, "source", r.candidate.source}});
    if (!r.prompt.empty()) st.uncommitted.artifacts.push_back({st.s.record.id, {n.id, "prompt", r.prompt}});
    if (!r.reply.empty()) st.uncommitted.artifacts.push_back({st.s.record.id, {n.id, "reply", r.reply}});
    if (st.s.keep_context) st.s.contexts[n.id] = {n.id, r.candidate.source, "", 0};
    st.uncommitted_tasks.push_back({std::move(n), std::move(r.candidate)});
  }
  // The operator's own reason (a spent budget, a provider's refusal, its circuit breaker) is the stop reason,
  // ahead of the generic one.
  if (!stop_reason.empty()) stop(self, stop_reason);
  if (st.make_failures > 200)
    stop(self, "the operator cannot propose anything new" +
                   (st.last_make_error.empty() ? std::string() : " (its last error: " + st.last_make_error + ")"));
  commit(self);
  fill(self);
}

void fill(Self self) {
  auto& st = self->state;
  if (st.stopping) return maybe_finish(self);
  // A blocking operator (LLM) is asked one proposal per request, as many at once as it has lanes: a child
  // comes back when its own reply does, not when the slowest of a batch does. Others get batches, two at most.
  const int lanes = st.s.operator_lanes;
  const int max_requests = lanes > 0 ? lanes : 2;
  if (st.paused || st.cancelling || st.operator_requests >= max_requests) return;
  const int64_t busy =
      st.in_flight + st.making + st.committing_tasks + static_cast<int64_t>(st.uncommitted_tasks.size());
  int64_t want = st.s.config.max_in_flight - busy;
  if (lanes > 0) want = std::min<int64_t>(want, max_requests - st.operator_requests);
  const int64_t budget_left = st.s.config.budget.max_evaluations - static_cast<int64_t>(st.graph.size()) - st.making;
  want = std::min(want, budget_left);
  if (want <= 0) return;
  auto props = st.strategy->propose(st.graph, static_cast<size_t>(want), st.rng);
  if (props.empty()) {
    if (busy == 0)
      stop(self, st.graph.size() == 0 ? "the strategy proposed nothing" : "the strategy has nothing left to try");
    return;
  }
  std::vector<MakeRequest> batch;
  batch.reserve(props.size());
  // With the parameter index shared, an operator that keeps a window answers has_params() from the index and
  // needs no record older than its window: a resume's first request carries at most the window's newest nodes,
  // not every stored one.
  size_t from = 0;
  if (st.s.params && st.s.operator_window > 0 && st.known_unsent.size() > st.s.operator_window)
    from = st.known_unsent.size() - st.s.operator_window;
  std::vector<NodeRecord> known;
  for (size_t i = from; i < st.known_unsent.size(); ++i)
    if (const NodeRecord* k = st.graph.find(st.known_unsent[i])) known.push_back(*k);  // dropped meanwhile: not needed
  st.known_unsent.clear();
  for (auto& p : props) {
    MakeRequest q;
    q.search = st.s.record.id;
    q.proposal = p;
    for (auto id : p.parents) {
      q.parents.push_back(*st.graph.find(id));  // held: a bounded strategy keeps() the nodes it proposes from
      if (st.s.keep_context) {
        NodeContext& c = st.s.contexts[id];
        q.parent_contexts.push_back({id, c.source, c.report, c.peak_gbps});
      }
    }
    if (st.s.keep_context) {
      for (auto b : st.graph.best_k(static_cast<size_t>(std::max(1, st.s.config.llm.best_k))))
        q.best.push_back({b, st.s.contexts[b].source, "", 0});
      q.device = st.device;
    }
    q.seed = st.rng();
    batch.push_back(std::move(q));
  }
  batch.front().known = std::move(known);
  if (lanes <= 0) return ask_operator(self, std::move(props), std::move(batch));
  for (size_t i = 0; i < props.size(); ++i)
    ask_operator(self, {props[i]}, {std::move(batch[i])});
}

// Sends one request for `props` (their MakeRequests in `batch`) to the operator; on_children takes the reply.
void ask_operator(Self self, std::vector<Proposal> props, std::vector<MakeRequest> batch) {
  auto& st = self->state;
  st.making += static_cast<int64_t>(props.size());
  st.operator_requests += 1;
  const auto asked = static_cast<int64_t>(props.size());
  self->request(st.s.op, caf::infinite, atoms::make_atom::value, std::move(batch))
      .then([self, props = std::move(props)](std::vector<MakeReply>& replies) { on_children(self, props, replies); },
            [self, asked](caf::error& e) {
              auto& st = self->state;
              st.making -= asked;
              st.operator_requests -= 1;
              stop(self, "the operator failed: " + self->system().render(e));
            });
}

// The verdict's timings as JSON (the "timing" artifact the dashboard and the report show); "" when untimed.
std::string timing_json(const EvalResult& r) {
  if (r.candidate.samples <= 0 && r.candidate.median_ms <= 0) return "";
  auto t = [](const Timing& x) {
    return "{\"p10_ms\":" + json::number(x.p10_ms) + ",\"median_ms\":" + json::number(x.median_ms) +
           ",\"p90_ms\":" + json::number(x.p90_ms) + ",\"samples\":" + std::to_string(x.samples) + "}";
  };
  return "{\"candidate\":" + t(r.candidate) + ",\"reference\":" + t(r.reference) +
         (r.compiled.median_ms > 0 ? ",\"compiled\":" + t(r.compiled) : std::string()) +
         ",\"compile_speedup\":" + json::number(r.compile_speedup) + ",\"gbps\":" + json::number(r.candidate_gbps) +
         ",\"peak_gbps\":" + json::number(r.peak_gbps) + "}";
}

// Scored records the strategy and the operator no longer need leave the graph, when both work without the
// history (a bounded strategy, an operator with a window, no LLM context): memory by the work in flight.
constexpr size_t kGraphWindow = 16384;

bool graph_bounded(const SearchState& st) {
  return st.strategy->bounded() && st.s.operator_window > 0 && !st.s.keep_context;
}

void trim_graph(SearchState& st) {
  if (!graph_bounded(st)) return;
  st.graph.trim([&st](const NodeRecord& n) { return !n.scored() || st.strategy->keeps(n.id); });
}

void on_scored(Self self, NodeRecord& n, EvalResult& r) {
  auto& st = self->state;
  --st.in_flight;
  st.graph.upsert(n);
  st.strategy->observe(st.graph, n);
  trim_graph(st);
  if (n.correct() && n.fitness > st.best) {
    st.best = n.fitness;
    st.since_best = 0;
  } else {
    ++st.since_best;
  }
  // The verdict goes to the store with the next commit, or on its own once enough are gathered, nothing is in
  // flight, or at the next tick: one message and one group commit per batch, not one per candidate.
  StoreBatch& b = st.verdicts;
  const std::string& id = st.s.record.id;
  std::string report = r.message;
  if (!r.where.empty()) report.append("\nwhere: ").append(r.where);
  if (!r.profile.empty()) report.append("\n").append(r.profile);
  if (auto timing = timing_json(r); !timing.empty()) b.artifacts.push_back({id, {n.id, "timing", timing}});
  if (st.s.keep_context) {
    st.s.contexts[n.id].report = r.status == EvalStatus::compile_error ? r.compile_log.substr(0, 6000) : report;
    st.s.contexts[n.id].peak_gbps = r.peak_gbps;
    if (!r.device.empty()) st.device = {r.device, r.sms, r.l2_bytes, st.device.copy_gbps};
    if (r.peak_gbps > 0) st.device.copy_gbps = r.peak_gbps;
  }
  // The context-memory agent diagnoses it (stored with the node) and learns from it.
  if (st.s.memory)
    self->send(st.s.memory, atoms::scored_atom::value,
               ScoredNote{id, n, r.status == EvalStatus::compile_error ? r.compile_log : report, r.peak_gbps});
  const uint64_t node = n.id;
  b.nodes.push_back({id, std::move(n), true});  // its parameters' key went with its first write
  b.artifacts.push_back({id, {node, "report", std::move(report)}});
  if (!r.compile_log.empty()) b.artifacts.push_back({id, {node, "compile_log", std::move(r.compile_log)}});
  if (!r.profile.empty()) b.artifacts.push_back({id, {node, "profile", std::move(r.profile)}});
  if (!r.runner_log.empty()) b.artifacts.push_back({id, {node, "runner_log", std::move(r.runner_log)}});
  if (b.entries() >= kVerdictBatch || st.in_flight == 0) send_verdicts(self);
  if (auto why = should_stop(st.s.config.budget, st.graph, elapsed(st), st.since_best)) stop(self, *why);
  fill(self);
  maybe_finish(self);
}

// Once a pause, resume or cancel is recorded: tells the watcher, proposes again after a resume, stops after
// a cancel.
void act_on_control(Self self, const std::string& what) {
  if (what == "cancel") return stop(self, "cancelled from the console");
  push_status(self);
  if (what == "resume") fill(self);
}

search_actor::behavior_type search(Self self, SearchSetup setup) {
  auto& st = self->state;
  st.s = std::move(setup);
  st.started = Clock::now();
  auto strategy = make_strategy(st.s.config.strategy);
  st.strategy = std::move(*strategy);  // validated when the config was loaded
  st.rng.seed(st.s.config.seed);
  if (!st.s.record.rng_state.empty() && !load_rng(st.rng, st.s.record.rng_state))
    log::warn("") << "search " << st.s.record.id
              << ": its stored random state cannot be read; it continues from its seed instead (a re-run of this "
                 "resume will not choose the same parents)\n";
  if (st.s.params) st.graph.share_params(st.s.params);
  st.nodes = spawn_node_runner(
      self, {st.s.record.id, st.s.config.problem, st.s.config.backend, st.s.config.eval, st.s.config.device_class},
      st.s.builds, st.s.devices);
  const size_t window = graph_bounded(st) ? kGraphWindow : 0;
  if (st.s.stored_nodes) {  // read from the store one record at a time: the load holds the window, not the store
    // An operator with a window (and the shared index) is sent only the newest `w` ids: only those are kept.
    const size_t w = st.s.params ? st.s.operator_window : 0;
    const StoredNodes ids_too = [&st, w](bool newest_first, const std::function<void(NodeRecord&)>& visit) {
      return st.s.stored_nodes(newest_first, [&](NodeRecord& n) {
        auto& ids = st.known_unsent;
        if (w == 0 || !newest_first || ids.size() < w) ids.push_back(n.id);  // newest first: the first w
        if (w > 0 && !newest_first && ids.size() >= 2 * w) ids.erase(ids.begin(), ids.end() - w);
        visit(n);
      });
    };
    if (Status read = load_stored(st.graph, *st.strategy, ids_too, window); !read)
      st.load_error = "its stored nodes could not be read again when it started: " + read.text();
    st.s.stored_nodes = nullptr;
  } else {
    for (auto& n : st.s.nodes) st.known_unsent.push_back(n.id);
    load_stored(st.graph, *st.strategy, st.s.nodes, window);
  }
  std::sort(st.known_unsent.begin(), st.known_unsent.end());  // the newest last: a window's records are sent
  st.scored_at_start = static_cast<int64_t>(st.graph.scored());
  st.paused = st.s.record.paused;  // a pause from the console outlives a restart
  for (auto& [id, n] : st.graph.nodes())
    if (n.correct() && n.fitness > st.best) st.best = n.fitness;
  return {
      [self](atoms::start_atom) {
        auto& st = self->state;
        if (!st.load_error.empty()) {  // a partial graph would mislead the strategy: nothing is proposed
          st.s.unfinished.clear();
          return stop(self, st.load_error);
        }
        // Resume: every stored node that was never scored is dispatched again, from its stored source.
        std::vector<NodeTask> again;
        for (auto& [id, c] : st.s.unfinished) {
          const NodeRecord* n = st.graph.find(id);
          if (!n || n->scored()) continue;
          NodeRecord fresh = *n;
          fresh.state = NodeState::proposed;
          again.push_back({std::move(fresh), std::move(c)});
        }
        dispatch(self, std::move(again));
        st.s.unfinished.clear();
        // Cancelled before a restart: what it had started is finished above, nothing new is proposed.
        if (st.s.record.cancelled) stop(self, "cancelled from the console (before the restart)");
        if (st.paused) push_status(self);
        if (auto why = should_stop(st.s.config.budget, st.graph, elapsed(st), st.since_best)) stop(self, *why);
        self->delayed_send(self, std::chrono::milliseconds(250), atoms::tick_atom::value);
        fill(self);
      },
      [self](atoms::state_atom, uint64_t id, NodeState state) { self->state.graph.set_state(id, state); },
      [self](atoms::scored_atom, NodeRecord& n, EvalResult& r) { on_scored(self, n, r); },
      [self](atoms::status_atom) { return status(self->state); },
      [self](atoms::control_atom, const std::string& what) -> caf::result<ActionReply> {
        auto& st = self->state;
        const std::string id = st.s.record.id;
        if (st.finished || st.stopping || st.cancelling)
          return ActionReply::refused(
              Errc::failed, "search " + id + " is already stopping or finished (" +
                                (st.cancelling ? std::string("cancelled from the console") : st.stop_reason) + ")");
        std::string said;
        if (what == "pause") {
          st.paused = true;
          said = "search " + id + " paused: nothing new is proposed; " + std::to_string(st.in_flight) +
                 " candidate(s) in flight finish";
        } else if (what == "resume") {
          if (!st.paused) return ActionReply::done("search " + id + " was not paused");
          st.paused = false;
          said = "search " + id + " resumed";
        } else if (what == "cancel") {
          st.s.record.cancelled = true;
          st.cancelling = true;  // nothing new from now; it stops once the record says so (below)
          said = "search " + id + " cancelled: it ends once the " + std::to_string(st.in_flight) +
                 " candidate(s) in flight are scored";
        } else {
          return ActionReply::refused(Errc::invalid_argument,
                                      "unknown control '" + what + "' (expected pause, resume or cancel)");
        }
        // Recorded before it is acknowledged: a node restarted after this answer honours it. (A pause takes
        // effect at once: nothing is proposed while the record is on its way.)
        st.s.record.paused = st.paused;
        StoreBatch b;
        b.searches.push_back(st.s.record);
        auto rp = self->make_response_promise<ActionReply>();
        self->request(st.s.store, caf::infinite, atoms::commit_atom::value, std::move(b))
            .then(
                [self, rp, what, said](Status& ok) mutable {
                  // Answered first: a cancel may end the search, and with it this actor.
                  rp.deliver(ActionReply::done(
                      ok ? said : said + " (not recorded: " + ok.message + "; a restart would not remember it)"));
                  act_on_control(self, what);
                },
                [self, rp, what, said](caf::error& e) mutable {
                  rp.deliver(ActionReply::done(
                      said + " (not recorded: the store actor failed: " + self->system().render(e) + ")"));
                  act_on_control(self, what);
                });
        return rp;
      },
      [self](atoms::tick_atom) {
        auto& st = self->state;
        if (st.finished || st.finishing) return;
        send_verdicts(self);
        push_status(self);
        // Records the trimmed graph dropped were freed on many threads' malloc arenas; every 2 s the free
        // pages go back to the system, so the process's resident memory follows the work in flight.
        if (graph_bounded(st) && ++st.ticks % 8 == 0) malloc_trim(0);
        if (auto why = should_stop(st.s.config.budget, st.graph, elapsed(st), st.since_best)) stop(self, *why);
        self->delayed_send(self, std::chrono::milliseconds(250), atoms::tick_atom::value);
      },
  };
}

}  // namespace

search_actor spawn_search_actor(caf::actor_system& sys, SearchSetup setup) {
  auto s = sys.spawn(search, std::move(setup));
  caf::anon_send(s, atoms::start_atom::value);
  return s;
}

}  // namespace kevolve
