#include "actors/deep_search/deep_search_actor.hpp"

namespace kevolve {
namespace {

struct DeepSearchState {
  std::shared_ptr<KnowledgeBase> kb;
  static inline const char* name = "deep-search";
};

deep_search_actor::behavior_type deep_search(deep_search_actor::stateful_pointer<DeepSearchState> self,
                                             std::shared_ptr<KnowledgeBase> kb) {
  self->state.kb = std::move(kb);
  return {
      [self](atoms::kb_atom, const KbQuery& q) -> std::vector<KbHit> {
        return self->state.kb ? self->state.kb->search(q) : std::vector<KbHit>{};
      },
  };
}

}  // namespace

deep_search_actor spawn_deep_search_actor(caf::actor_system& sys, std::shared_ptr<KnowledgeBase> kb) {
  return sys.spawn(deep_search, std::move(kb));
}

}  // namespace kevolve
