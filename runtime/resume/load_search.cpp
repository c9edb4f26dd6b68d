#include "runtime/resume/load_search.hpp"

#include <cstdlib>
#include <algorithm>
#include <iostream>
#include <optional>

#include "knowledge/hardware_profile.hpp"
#include "runtime/core/log.hpp"
#include "runtime/records/backend_kind.hpp"
#include "runtime/search/graph.hpp"

namespace kevolve {

namespace {

// "3, 5, 8" (the first 64 ids, then ", ...").
std::string id_list(const std::vector<uint64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 64; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return ids.size() > 64 ? out + ", ..." : out;
}

// The device's measured copy bandwidth in a node's stored "timing" artifact (the search actor's
// timing_json: ..."peak_gbps":X}); 0 when it is not there.
double peak_gbps_of(const std::string& timing) {
  const std::string key = "\"peak_gbps\":";
  const size_t at = timing.find(key);
  if (at == std::string::npos) return 0;
  char* end = nullptr;
  const double v = std::strtod(timing.c_str() + at + key.size(), &end);
  return end != timing.c_str() + at + key.size() && v > 0 ? v : 0;
}

// A search whose record was lost (a repaired store) while its nodes remain: its record rebuilt from the nodes
// (the next id after the highest) and this config, never started over at node 1, which would overwrite them.
// nullopt when it has no nodes either (a new search); an error when its nodes cannot be read.
Expected<std::optional<SearchRecord>> rebuild_lost_record(Store& store, const RunConfig& config,
                                                          const ProblemSpec& spec) {
  using R = Expected<std::optional<SearchRecord>>;
  SearchRecord r;
  size_t orphans = 0;
  const Status unreadable = store.each_node(config.search_id, false, [&](NodeRecord& n) {
    ++orphans;
    r.next_node = std::max(r.next_node, n.id + 1);
  });
  if (!unreadable)
    return R::failure(unreadable.code, "store " + config.store + ": search '" + config.search_id +
                                           "' has no record and its nodes cannot be read: " + unreadable.message);
  if (orphans == 0) return std::optional<SearchRecord>{};
  r.id = config.search_id;
  r.problem = spec.name;
  r.strategy = config.strategy.name;
  r.config_text = config.text;
  log::warn("") << "store " << config.store << ": the record of search " << config.search_id << " was lost but "
                << orphans << " of its nodes remain: rebuilt from them and this config (next node " << r.next_node
                << ", the strategy's random state starts afresh)";
  return std::optional<SearchRecord>{std::move(r)};
}

// An unscored node is evaluated again from its stored source (into l.plan.unfinished). A source that cannot be
// read (a damaged store) stops the resume; one that is gone (lost by a repair) is never evaluated as an empty
// kernel: the node is scored harness_error saying so, in the store too (and in l.counts), and named in the log.
Status requeue_unscored(Store& store, const RunConfig& config, const ProblemSpec& spec,
                        std::vector<NodeRecord>& unscored, LoadedSearch& l) {
  std::vector<uint64_t> lost;
  StoreBatch lost_batch;
  for (auto& n : unscored) {
    auto src = store.artifact(config.search_id, n.id, "source");
    if (!src && src.code() != Errc::not_found)
      return Status::failure(src.code(), "store " + config.store + ": search '" + config.search_id +
                                        "': the source of node " + std::to_string(n.id) +
                                        ", to be evaluated again, cannot be read: " + src.error() +
                                        " (kevolve store repair " + config.store + " salvages what can be read)");
    if (!src) {
      n.state = NodeState::scored;
      n.status = EvalStatus::harness_error;
      n.reason = "source_lost";
      n.message = "its source was lost from the store before it was evaluated: not evaluated";
      lost.push_back(n.id);
      lost_batch.nodes.push_back({config.search_id, n});
      --l.counts.in_flight;
      ++l.counts.evaluated;
      ++l.counts.failed;
      continue;
    }
    Candidate c;
    c.source = *src;
    c.entry = spec.entry;
    c.parameters = n.params;
    c.provenance = "resumed";
    l.plan.unfinished[n.id] = c;
  }
  if (!lost.empty()) {
    log::warn("") << "store " << config.store << ": search " << config.search_id << ": " << lost.size()
                  << " node(s) not yet scored have lost their source and are marked harness_error (source_lost), not "
                     "evaluated: nodes "
                  << id_list(lost);
    if (auto w = store.write(lost_batch); !w)
      return Status::failure(w.code, "store " + config.store + ": marking the nodes whose source was lost: " + w.message);
  }
  return Status::success();
}

// A stored search taken up again (its record already in l.plan.record): the counts and the best of its nodes,
// the operator's contexts, the sources of the nodes never scored (l.plan.unfinished) and the reader of its
// nodes for the search actor (l.plan.stored_nodes). A node or an artifact that cannot be read stops it.
Status resume_stored(const std::shared_ptr<Store>& stored, const RunConfig& config, const ProblemSpec& spec,
                     Operator& op, LoadedSearch& l) {
  Store& store = *stored;
  SearchPlan& plan = l.plan;
  // One pass over the stored nodes that keeps only those not scored yet (to be evaluated again): the counts,
  // the best, and the operator's context (sources, reports, timings of the scored nodes). An artifact that is
  // absent is context lost, one that cannot be read is a damaged store: the resume stops and names it. The
  // search actor reads the nodes again, one at a time, into its graph (plan.stored_nodes).
  Status damaged;
  auto read = [&](uint64_t id, const char* kind) -> std::optional<std::string> {
    auto a = store.artifact(config.search_id, id, kind);
    if (a) return *a;
    if (a.code() != Errc::not_found && damaged.ok())
      damaged = Status::failure(
          a.code(), "the " + std::string(kind) + " of node " + std::to_string(id) + " cannot be read: " + a.error());
    return std::nullopt;
  };
  std::vector<NodeRecord> unscored;
  const Status unreadable = store.each_node(config.search_id, false, [&](NodeRecord& n) {
    l.counts.add(n);
    if (n.correct() && n.fitness > l.best_fitness) {
      l.best_fitness = n.fitness;
      l.best_node = n.id;
    }
    if (op.needs_context() && damaged.ok()) {
      NodeContext& c = plan.contexts[n.id];
      c.id = n.id;
      if (auto src = read(n.id, "source")) c.source = *src;
      auto log = read(n.id, "compile_log");
      auto rep = read(n.id, "report");
      c.report = n.status == EvalStatus::compile_error && log ? *log : (rep ? *rep : "");
      if (auto timing = read(n.id, "timing")) c.peak_gbps = peak_gbps_of(*timing);
    }
    if (!n.scored()) unscored.push_back(std::move(n));
  });
  if (!unreadable)
    return Status::failure(unreadable.code, "store " + config.store + ": search '" + config.search_id +
                                                "' cannot be resumed: " + unreadable.message +
                                                "; refusing to continue without them (their ids would be reused)");
  if (!damaged.ok())
    return Status::failure(damaged.code, "store " + config.store + ": search '" + config.search_id +
                                             "' cannot be resumed: " + damaged.message + " (kevolve store verify " +
                                             config.store +
                                             " names every damaged record; kevolve store repair salvages the rest)");
  const int64_t scored = l.counts.evaluated;
  // A search that ended on its evaluation budget continues when the config now allows more evaluations:
  // from its stored graph, its strategy rebuilt from it (the user raised the budget to get further).
  if (plan.record.finished && plan.record.stop_reason.rfind("evaluation budget", 0) == 0 &&
      config.budget.max_evaluations > scored) {
    log::info("") << "search " << config.search_id << " ended on its " << plan.record.stop_reason << " with " << scored
                  << " evaluated; the budget is now " << config.budget.max_evaluations
                  << ": continuing from its stored graph\n";
    plan.record.finished = false;
    plan.record.stop_reason.clear();
  }
  if (Status q = requeue_unscored(store, config, spec, unscored, l); !q) return q;
  // Scored nodes are kept, never evaluated again; the nodes not scored when the search stopped are
  // evaluated now — again for those whose verdict had come but was not stored yet. They are named.
  std::vector<uint64_t> again;
  for (auto& n : unscored)
    if (!n.scored()) again.push_back(n.id);
  const std::string id = config.search_id;
  plan.stored_nodes = [stored, id](bool newest_first, const std::function<void(NodeRecord&)>& visit) {
    return stored->each_node(id, newest_first, visit);
  };
  if (!plan.record.finished && (scored > 0 || !again.empty())) {
    auto line = log::info("");
    line << "resuming search " << config.search_id << ": " << scored << " scored nodes kept";
    if (!again.empty())
      line << "; " << again.size() << " not scored when it stopped are evaluated again: nodes " << id_list(again);
  }
  return Status::success();
}

}  // namespace

Expected<LoadedSearch> load_search(const std::shared_ptr<Store>& stored, const RunConfig& config,
                                   const ProblemSpec& spec, Operator& op) {
  using R = Expected<LoadedSearch>;
  Store& store = *stored;
  LoadedSearch l;
  // The context memory of this problem on this backend and hardware, as earlier searches left it.
  std::string note;
  l.lessons = recall_lessons(
      store, lessons_key(spec.name, config.backend, resolve_hardware(config.backend, config.hardware)), &note);
  if (!note.empty()) log::info("") << "memory: " << note << " (starting without it)";
  auto existing = store.search(config.search_id);
  // Only a search that is not there starts afresh: one whose record cannot be read would restart at node 1
  // and overwrite its nodes.
  if (!existing && existing.code() != Errc::not_found)
    return R::failure(existing.code(), "store " + config.store + ": search '" + config.search_id +
                                           "' cannot be resumed: " + existing.error() +
                                           "; refusing to start it over, which would overwrite it (choose another "
                                           "[search] id, or another store)");
  // A search whose record was lost (a repaired store) while its nodes remain is rebuilt from the nodes and
  // this config, never started over at node 1: that would overwrite them.
  std::optional<SearchRecord> rebuilt;
  if (!existing) {
    auto r = rebuild_lost_record(store, config, spec);
    if (!r) return R::failure(r.status());
    rebuilt = std::move(*r);
  }
  const bool is_new = !existing && !rebuilt;
  if (l.lessons.evaluated() > 0 && backend_traits(config.backend).evaluates) {
    log::info("") << "memory: " << l.lessons.summary() ;
    if (is_new && config.warm_start)
      if (auto how = op.warm_start(l.lessons); !how.empty()) log::info("") << "warm start: " << how ;
  }
  SearchPlan& plan = l.plan;
  plan.keep_context = op.needs_context();
  plan.operator_window = op.history_window();
  plan.operator_lanes = op.blocks() ? std::max(1, op.concurrency()) : 0;
  plan.config = config;
  plan.config.strategy.repair = op.can_repair();  // failed nodes go back to operators that can fix them
  plan.spec = spec;
  if (existing || rebuilt) {
    if (existing && existing->problem != spec.name)
      return R::failure("store " + config.store + ": search '" + config.search_id + "' is for problem '" +
                        existing->problem + "', not '" + spec.name + "' (choose another [search] id or store)");
    plan.record = existing ? *existing : *rebuilt;
    if (Status resumed = resume_stored(stored, config, spec, op, l); !resumed) return R::failure(resumed);
  } else {
    plan.record.id = config.search_id;
    plan.record.problem = spec.name;
    plan.record.strategy = config.strategy.name;
    plan.record.config_text = config.text;
  }
  return l;
}

// The status of a search the store holds as finished.
SearchStatus stored_status(const LoadedSearch& l) {
  SearchStatus s;
  s.search = l.plan.record.id;
  s.finished = true;
  s.stop_reason = l.plan.record.stop_reason;
  s.evaluated = l.counts.evaluated;
  s.correct = l.counts.correct;
  s.failed = l.counts.failed;
  s.best_fitness = l.best_fitness;
  s.best_node = l.best_node;
  return s;
}

}  // namespace kevolve
