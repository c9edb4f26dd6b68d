#include "actors/memory/memory_actor.hpp"

#include "runtime/operators/diagnosis.hpp"

namespace kevolve {
namespace {

struct MemoryState {
  MemorySetup s;
  bool dirty = false;
  static inline const char* name = "context-memory";
};

ArtifactEntry lessons_entry(const Lessons& l) { return {lessons_search(l.key), {0, "lessons", encode_lessons(l)}}; }

memory_actor::behavior_type memory(memory_actor::stateful_pointer<MemoryState> self, MemorySetup setup) {
  self->state.s = std::move(setup);
  return {
      [self](atoms::scored_atom, const ScoredNote& note) {
        auto& st = self->state;
        const Diagnosis d = diagnose(note.node, st.s.spec, note.report, st.s.backend, note.peak_gbps);
        std::string text = d.summary;
        for (auto& line : d.directives) text += "\n- " + line;
        StoreBatch b;
        b.artifacts.push_back({note.search, {note.node.id, "diagnosis", text}});
        std::string source;
        if (note.node.correct() && st.s.reader)
          if (auto src = st.s.reader->artifact(note.search, note.node.id, "source")) source = *src;
        const bool improved = st.s.lessons.record(note.search, note.node, source);
        st.dirty = true;
        if (improved) {  // a new best kernel is worth keeping at once
          b.artifacts.push_back(lessons_entry(st.s.lessons));
          st.dirty = false;
        }
        self->send(st.s.store, atoms::write_atom::value, std::move(b));
      },
      [self](atoms::flush_atom) -> caf::result<Status> {
        auto& st = self->state;
        StoreBatch b;
        if (st.dirty) b.artifacts.push_back(lessons_entry(st.s.lessons));
        st.dirty = false;
        auto rp = self->make_response_promise<Status>();
        self->request(st.s.store, caf::infinite, atoms::commit_atom::value, std::move(b))
            .then([rp](Status& ok) mutable { rp.deliver(std::move(ok)); },
                  [rp, self](caf::error& e) mutable {
                    rp.deliver(Status::failure(Errc::unavailable, "the store actor: " + self->system().render(e)));
                  });
        return rp;
      },
  };
}

}  // namespace

memory_actor spawn_memory_actor(caf::actor_system& sys, MemorySetup setup) {
  // Reading sources from the store blocks briefly: a thread of its own keeps it off the scheduler.
  return sys.spawn<caf::detached>(memory, std::move(setup));
}

}  // namespace kevolve
