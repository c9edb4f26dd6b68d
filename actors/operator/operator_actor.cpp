#include "actors/operator/operator_actor.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "actors/farm/farm.hpp"
#include "runtime/core/log.hpp"

namespace kevolve {

// A share of the operator's work for one lane of a blocking operator: the graph as it stood when the
// request came (a snapshot its lane reads while the operator actor goes on updating its own) and the requests.
struct MakeJob {
  std::shared_ptr<const SearchGraph> graph;
  std::vector<MakeRequest> batch;
};

}  // namespace kevolve

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kevolve::MakeJob)  // in-process only: it never crosses a network

namespace kevolve {
namespace {

// A lane of a blocking operator: one make() at a time, on a thread of its own (network calls block).
using make_lane = caf::typed_actor<caf::replies_to<atoms::make_atom, MakeJob>::with<std::vector<MakeReply>>>;

// The graph of one search as the operator sees it, and the snapshot lanes read (blocking operators).
struct OperatorGraph {
  SearchGraph live;
  std::shared_ptr<const SearchGraph> snapshot;
  bool changed = true;                                 // live has nodes the snapshot lacks
  std::chrono::steady_clock::time_point snapshot_at{};  // when the snapshot was taken
};

struct OperatorState : FarmState<make_lane, atoms::make_atom, MakeJob, std::vector<MakeReply>> {
  std::shared_ptr<Operator> op;
  deep_search_actor deep;                     // the deep-search agent, when the operator draws on a knowledge base
  std::shared_ptr<std::atomic<uint64_t>> retrieval_failures = std::make_shared<std::atomic<uint64_t>>(0);
  std::map<std::string, OperatorGraph> graphs;  // per search: every node it told us about
  SharedParams shared;                          // the parameter index of one search, shared with its search actor
  static inline const char* name = "operator";
};

struct LaneState {
  static inline const char* name = "operator-lane";
};

// One child for one request, from the graph `g` of its search. With a deep-search agent the knowledge the
// operator asks for is retrieved first (this blocks: the caller runs on a thread of its own).
MakeReply make_child(caf::actor_system& sys, Operator& op, const deep_search_actor& deep, const SearchGraph& g,
                     const MakeRequest& q, std::atomic<uint64_t>& retrieval_failures) {
  OperatorContext ctx{.parents = q.parent_contexts, .best = q.best, .device = q.device};
  if (deep) {
    const KbQuery kq = op.knowledge_query(q.proposal, g, ctx);
    if (!kq.text.empty()) {
      caf::scoped_actor asker{sys};
      asker->request(deep, std::chrono::seconds(30), atoms::kb_atom::value, kq)
          .receive(
              [&](std::vector<KbHit>& hits) {
                ctx.knowledge = std::move(hits);
                ctx.knowledge_given = true;
              },
              [&](caf::error& e) {  // no hits: the operator goes on without them, and says why
                const uint64_t n = ++retrieval_failures;
                log::warn("operator") << "knowledge retrieval failed (" << sys.render(e)
                                      << "); proposing without it (" << n << " so far)";
              });
    }
  }
  Rng rng(q.seed);
  auto child = op.make(q.proposal, g, rng, ctx);
  MakeReply r;
  if (child) {
    r.params = std::move(child->params);
    r.candidate = std::move(child->candidate);
    r.prompt = std::move(child->prompt);
    r.reply = std::move(child->reply);
  } else {
    r.status = child.status();
  }
  r.stop = op.exhausted();
  return r;
}

make_lane::behavior_type lane_behavior(make_lane::stateful_pointer<LaneState> self, std::shared_ptr<Operator> op,
                                       deep_search_actor deep, std::shared_ptr<std::atomic<uint64_t>> failures) {
  return {
      [self, op, deep, failures](atoms::make_atom, const MakeJob& job) {
        std::vector<MakeReply> out;
        out.reserve(job.batch.size());
        for (const MakeRequest& q : job.batch)
          out.push_back(make_child(self->system(), *op, deep, *job.graph, q, *failures));
        return out;
      },
  };
}

// Adds what a batch tells about its search (every node of a resumed search on its first request, then the
// parents) to the operator's graph of that search.
OperatorGraph& take_in(OperatorState& st, const std::vector<MakeRequest>& batch) {
  OperatorGraph* last = nullptr;
  for (auto& q : batch) {
    auto [at, fresh] = st.graphs.try_emplace(q.search);
    OperatorGraph& og = at->second;
    SearchGraph& g = og.live;
    const size_t window = st.op->history_window();
    if (fresh) {
      g.retain(window);
      if (st.shared.index && q.search == st.shared.search) g.share_params(st.shared.index);
    }
    // A resumed search's first request carries every stored node: trimmed as they come, the graph
    // never holds more than its window (their parameter hashes stay for has_params()).
    for (size_t i = 0; i < q.known.size(); ++i) {
      g.upsert(q.known[i]);
      if (window > 0 && (i + 1) % window == 0) g.trim();
    }
    for (auto& p : q.parents) g.upsert(p);
    og.changed = og.changed || !q.known.empty() || !q.parents.empty();
    last = &og;
  }
  return *last;
}

// The snapshot lanes read: taken again when the graph changed and no lane holds the current one, or at most
// every 2 s while lanes hold it (at most one snapshot per 2 s of a reply's latency is alive at once: a lane
// may see the search as it was up to 2 s earlier; the search actor drops a duplicate child either way).
std::shared_ptr<const SearchGraph> snapshot(OperatorState& st, OperatorGraph& og, const std::string& search) {
  const auto now = std::chrono::steady_clock::now();
  if (og.snapshot && (!og.changed || (og.snapshot.use_count() > 1 && now - og.snapshot_at < std::chrono::seconds(2))))
    return og.snapshot;
  auto copy = std::make_shared<SearchGraph>();
  copy->retain(st.op->history_window());
  if (st.shared.index && search == st.shared.search) copy->share_params(st.shared.index);
  for (auto& [id, n] : og.live.nodes()) copy->upsert(n);
  og.snapshot = std::move(copy);
  og.snapshot_at = now;
  og.changed = false;
  return og.snapshot;
}

operator_actor::behavior_type operator_behavior(operator_actor::stateful_pointer<OperatorState> self,
                                                std::shared_ptr<Operator> op, deep_search_actor deep,
                                                SharedParams shared) {
  auto& st = self->state;
  st.op = std::move(op);
  st.deep = std::move(deep);
  st.shared = std::move(shared);
  // A blocking operator (network calls) gets concurrency() lanes, each a thread of its own; requests beyond
  // them wait in the farm's queue. Each request is answered as soon as its own children are made.
  if (st.op->blocks()) {
    const int lanes = std::max(1, st.op->concurrency());
    for (int i = 0; i < lanes; ++i) {
      st.workers.push_back(self->spawn<caf::detached + caf::linked>(lane_behavior, st.op, st.deep,
                                                                     st.retrieval_failures));
      st.busy.push_back(0);
    }
  }
  return {
      [self](atoms::make_atom, std::vector<MakeRequest>& batch) -> caf::typed_response_promise<std::vector<MakeReply>> {
        auto& st = self->state;
        auto rp = self->make_response_promise<std::vector<MakeReply>>();
        if (batch.empty()) {
          rp.deliver(std::vector<MakeReply>{});
          return rp;
        }
        OperatorGraph& og = take_in(st, batch);
        if (!st.workers.empty()) {
          MakeJob job{snapshot(st, og, batch.front().search), std::move(batch)};
          og.live.trim();  // back to the operator's window, if it has one (the snapshot holds the parents)
          st.queue.emplace_back(std::move(job), rp);
          farm_dispatch<std::remove_pointer_t<decltype(self)>, OperatorState, atoms::make_atom, MakeJob,
                        std::vector<MakeReply>>(self, st);
          return rp;
        }
        // Operators that do not block make their children here, one after another.
        std::vector<MakeReply> out;
        out.reserve(batch.size());
        for (auto& q : batch)
          out.push_back(
              make_child(self->system(), *st.op, st.deep, st.graphs[q.search].live, q, *st.retrieval_failures));
        for (auto& q : batch) st.graphs[q.search].live.trim();  // back to the operator's window, if it has one
        rp.deliver(std::move(out));
        return rp;
      },
  };
}

}  // namespace

operator_actor spawn_operator_actor(caf::actor_system& sys, std::shared_ptr<Operator> op, deep_search_actor deep,
                                    SharedParams shared) {
  // Retrieval requests block: such an operator actor gets a thread of its own. A blocking operator's makes run
  // on its lanes, each detached.
  if (deep && !op->blocks())
    return sys.spawn<caf::detached>(operator_behavior, std::move(op), std::move(deep), std::move(shared));
  return sys.spawn(operator_behavior, std::move(op), std::move(deep), std::move(shared));
}

}  // namespace kevolve
