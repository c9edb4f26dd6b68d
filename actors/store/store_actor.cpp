#include "actors/store/store_actor.hpp"
#include "runtime/core/log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace kevolve {
namespace {

namespace fs = std::filesystem;

struct StoreState {
  std::shared_ptr<Store> store;
  StoreBatch pending;
  std::vector<caf::typed_response_promise<Status>> waiting;
  // Fire-and-forget entries that failed to be written: every later commit answers with this.
  size_t lost_entries = 0;
  Status lost;
  bool flush_scheduled = false;
  std::string checkpoint_dir;
  double checkpoint_seconds = 0;
  static inline const char* name = "store";
};

size_t entries(const StoreBatch& b) { return b.entries(); }

void flush(store_actor::stateful_pointer<StoreState> self) {
  auto& st = self->state;
  st.flush_scheduled = false;
  Status ok = Status::success();
  if (!st.pending.empty()) {  // a commit of nothing: everything before it is already durable
    ok = st.store->write(st.pending);
    if (!ok) {
      log::warn("") << "store: " << ok.message << " (" << entries(st.pending) << " entries not saved)";
      if (st.lost.ok()) st.lost = ok;
      st.lost_entries += entries(st.pending);
    }
  }
  // Earlier lost writes fail every commit after them: what the caller believes saved is not all there.
  const Status answer =
      st.lost.ok()
          ? ok
          : Status::failure(st.lost.code,
                            std::to_string(st.lost_entries) +
                                " store entries could not be written (the first failure: " + st.lost.message + ")");
  for (auto& rp : st.waiting) rp.deliver(answer);
  st.waiting.clear();
  st.pending = StoreBatch{};
}

void schedule(store_actor::stateful_pointer<StoreState> self) {
  if (entries(self->state.pending) >= 256) return flush(self);
  if (!self->state.flush_scheduled) {
    self->state.flush_scheduled = true;
    self->delayed_send(self, std::chrono::milliseconds(2), atoms::flush_atom::value);
  }
}

// Ok with the folder as its message, or why there is no checkpoint.
Status take_checkpoint(store_actor::stateful_pointer<StoreState> self, const std::string& dir) {
  flush(self);
  const std::string partial = dir + ".partial";
  auto ok = self->state.store->checkpoint(partial);
  if (!ok) return ok;
  // Testing aid: KEVOLVE_CHECKPOINT_DELAY_MS holds a finished but unpublished checkpoint, so crash
  // tests can kill the process in the middle of one.
  if (const char* d = std::getenv("KEVOLVE_CHECKPOINT_DELAY_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
  std::error_code ec;
  fs::rename(partial, dir, ec);
  if (ec) return Status::failure(Errc::io, "renaming " + partial + ": " + ec.message());
  return Status{Errc::ok, dir};
}

store_actor::behavior_type store_behavior(store_actor::stateful_pointer<StoreState> self, std::shared_ptr<Store> store,
                                          std::string checkpoint_dir, double checkpoint_seconds) {
  self->state.store = std::move(store);
  self->state.checkpoint_dir = std::move(checkpoint_dir);
  self->state.checkpoint_seconds = checkpoint_seconds;
  if (checkpoint_seconds > 0)
    self->delayed_send(self, std::chrono::milliseconds(static_cast<int64_t>(checkpoint_seconds * 1000)),
                       atoms::tick_atom::value);
  self->set_exit_handler([self](const caf::exit_msg& m) {  // flush what is pending, then go
    flush(self);
    self->quit(m.reason);
  });
  return {
      [self](atoms::write_atom, StoreBatch& b) {
        self->state.pending.append(std::move(b));
        schedule(self);
      },
      [self](atoms::commit_atom, StoreBatch& b) -> caf::typed_response_promise<Status> {
        auto rp = self->make_response_promise<Status>();
        self->state.pending.append(std::move(b));
        self->state.waiting.push_back(rp);
        schedule(self);
        return rp;
      },
      [self](atoms::flush_atom) { flush(self); },
      [self](atoms::ckpt_atom, std::string& dir) -> Status {
        std::error_code ec;
        fs::create_directories(fs::path(dir).parent_path(), ec);
        return take_checkpoint(self, dir);
      },
      [self](atoms::tick_atom) {
        auto& st = self->state;
        const auto stamp =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        const std::string dir = st.checkpoint_dir + "/" + std::to_string(stamp);
        std::error_code ec;
        fs::create_directories(st.checkpoint_dir, ec);
        auto made = take_checkpoint(self, dir);
        if (!made) log::warn("") << "checkpoint failed: " << made.message ;
        std::vector<fs::path> kept;  // keep the two newest complete checkpoints (names are timestamps)
        for (auto& e : fs::directory_iterator(st.checkpoint_dir, ec))
          if (e.path().extension().empty()) kept.push_back(e.path());
        std::sort(kept.begin(), kept.end());
        for (size_t i = 0; i + 2 < kept.size(); ++i) fs::remove_all(kept[i], ec);
        self->delayed_send(self, std::chrono::milliseconds(static_cast<int64_t>(st.checkpoint_seconds * 1000)),
                           atoms::tick_atom::value);
      },
  };
}

}  // namespace

void clean_partial_checkpoints(const std::string& checkpoint_dir) {
  std::error_code ec;
  if (!fs::is_directory(checkpoint_dir, ec)) return;
  for (auto& e : fs::directory_iterator(checkpoint_dir, ec)) {
    const std::string n = e.path().filename().string();
    auto ends = [&](const std::string& s) {
      return n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".tmp") || ends(".partial")) fs::remove_all(e.path(), ec);
  }
}

store_actor spawn_store_actor(caf::actor_system& sys, std::shared_ptr<Store> store, std::string checkpoint_dir,
                              double checkpoint_seconds, bool own_thread) {
  if (!own_thread) return sys.spawn(store_behavior, std::move(store), std::move(checkpoint_dir), checkpoint_seconds);
  return sys.spawn<caf::detached>(store_behavior, std::move(store), std::move(checkpoint_dir), checkpoint_seconds);
}

}  // namespace kevolve
