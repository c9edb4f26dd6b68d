#include "actors/operator/operator_actor.hpp"

#include <map>

namespace kevolve {
namespace {

struct OperatorState {
  std::shared_ptr<Operator> op;
  std::map<std::string, SearchGraph> graphs;  // per search: every node it told us about
  static inline const char* name = "operator";
};

operator_actor::behavior_type operator_behavior(operator_actor::stateful_pointer<OperatorState> self,
                                                std::shared_ptr<Operator> op) {
  self->state.op = std::move(op);
  return {
      [self](atoms::make_atom, const std::vector<MakeRequest>& batch) {
        std::vector<MakeReply> out;
        out.reserve(batch.size());
        for (auto& q : batch) {
          SearchGraph& g = self->state.graphs[q.search];
          for (auto& n : q.known) g.upsert(n);
          for (auto& p : q.parents) g.upsert(p);
          Rng rng(q.seed);
          auto child = self->state.op->make(q.proposal, g, rng);
          MakeReply r;
          r.ok = static_cast<bool>(child);
          if (child) {
            r.params = std::move(child->params);
            r.candidate = std::move(child->candidate);
          } else {
            r.error = child.error();
          }
          out.push_back(std::move(r));
        }
        return out;
      },
  };
}

}  // namespace

operator_actor spawn_operator_actor(caf::actor_system& sys, std::shared_ptr<Operator> op) {
  return sys.spawn(operator_behavior, std::move(op));
}

}  // namespace kevolve
