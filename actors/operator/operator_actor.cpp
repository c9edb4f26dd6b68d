#include "actors/operator/operator_actor.hpp"
#include "runtime/core/log.hpp"

#include <atomic>
#include <map>
#include <thread>

namespace kevolve {
namespace {

struct OperatorState {
  std::shared_ptr<Operator> op;
  deep_search_actor deep;                     // the deep-search agent, when the operator draws on a knowledge base
  uint64_t retrieval_failures = 0;            // knowledge retrievals that failed (the proposal went on without)
  std::map<std::string, SearchGraph> graphs;  // per search: every node it told us about
  SharedParams shared;                        // the parameter index of one search, shared with its search actor
  static inline const char* name = "operator";
};

operator_actor::behavior_type operator_behavior(operator_actor::stateful_pointer<OperatorState> self,
                                                std::shared_ptr<Operator> op, deep_search_actor deep,
                                                SharedParams shared) {
  self->state.op = std::move(op);
  self->state.deep = std::move(deep);
  self->state.shared = std::move(shared);
  return {
      [self](atoms::make_atom, const std::vector<MakeRequest>& batch) {
        std::vector<MakeReply> out(batch.size());
        for (auto& q : batch) {
          auto [at, fresh] = self->state.graphs.try_emplace(q.search);
          SearchGraph& g = at->second;
          const size_t window = self->state.op->history_window();
          if (fresh) {
            g.retain(window);
            if (self->state.shared.index && q.search == self->state.shared.search)
              g.share_params(self->state.shared.index);
          }
          // A resumed search's first request carries every stored node: trimmed as they come, the graph
          // never holds more than its window (their parameter hashes stay for has_params()).
          for (size_t i = 0; i < q.known.size(); ++i) {
            g.upsert(q.known[i]);
            if (window > 0 && (i + 1) % window == 0) g.trim();
          }
          for (auto& p : q.parents) g.upsert(p);
        }
        // One child per request; operators that block (LLM calls) run up to concurrency() at once.
        auto make_one = [&](size_t i) {
          const MakeRequest& q = batch[i];
          OperatorContext ctx;
          for (size_t k = 0; k < q.parents.size(); ++k)
            ctx.parents.push_back({q.parents[k].id, k < q.parent_sources.size() ? q.parent_sources[k] : "",
                                   k < q.parent_reports.size() ? q.parent_reports[k] : "",
                                   k < q.parent_peak_gbps.size() ? q.parent_peak_gbps[k] : 0});
          for (size_t k = 0; k < q.best_ids.size(); ++k)
            ctx.best.push_back({q.best_ids[k], k < q.best_sources.size() ? q.best_sources[k] : "", "", 0});
          ctx.device = {q.device, q.device_sms, q.device_l2_bytes, q.device_gbps};
          if (self->state
                  .deep) {  // retrieval through the deep-search agent (this actor may block: it has its own thread)
            const KbQuery kq = self->state.op->knowledge_query(q.proposal, self->state.graphs[q.search], ctx);
            if (!kq.text.empty()) {
              caf::scoped_actor asker{self->system()};
              asker->request(self->state.deep, std::chrono::seconds(30), atoms::kb_atom::value, kq)
                  .receive(
                      [&](std::vector<KbHit>& hits) {
                        ctx.knowledge = std::move(hits);
                        ctx.knowledge_given = true;
                      },
                      [&](caf::error& e) {  // no hits: the operator goes on without them, and says why
                        ++self->state.retrieval_failures;
                        log::warn("operator") << "knowledge retrieval failed (" << self->system().render(e)
                                              << "); proposing without it (" << self->state.retrieval_failures
                                              << " so far)";
                      });
            }
          }
          Rng rng(q.seed);
          auto child = self->state.op->make(q.proposal, self->state.graphs[q.search], rng, ctx);
          MakeReply& r = out[i];
          if (child) {
            r.params = std::move(child->params);
            r.candidate = std::move(child->candidate);
            r.prompt = std::move(child->prompt);
            r.reply = std::move(child->reply);
          } else {
            r.status = child.status();
          }
          r.stop = self->state.op->exhausted();
        };
        const size_t lanes =
            std::min<size_t>(batch.size(), static_cast<size_t>(std::max(1, self->state.op->concurrency())));
        if (lanes <= 1) {
          for (size_t i = 0; i < batch.size(); ++i) make_one(i);
        } else {
          std::atomic<size_t> next{0};
          std::vector<std::thread> pool;
          for (size_t l = 0; l < lanes; ++l)
            pool.emplace_back([&] {
              for (size_t i; (i = next++) < batch.size();) make_one(i);
            });
          for (auto& t : pool) t.join();
        }
        for (auto& q : batch) self->state.graphs[q.search].trim();  // back to the operator's window, if it has one
        return out;
      },
  };
}

}  // namespace

operator_actor spawn_operator_actor(caf::actor_system& sys, std::shared_ptr<Operator> op, deep_search_actor deep,
                                    SharedParams shared) {
  // Network calls and retrieval requests block: such an operator actor gets a thread of its own.
  if (op->blocks() || deep)
    return sys.spawn<caf::detached>(operator_behavior, std::move(op), std::move(deep), std::move(shared));
  return sys.spawn(operator_behavior, std::move(op), std::move(deep), std::move(shared));
}

}  // namespace kevolve
