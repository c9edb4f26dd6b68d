// A farm spreads requests over a fixed set of workers that each handle one request at a time (compile
// farm, device registry). Requests beyond the free workers wait in the farm's queue, so a slow worker
// never receives more than `per_worker` requests while others are idle. The farm holds at most one
// outstanding request per worker (cheap in CAF 0.17); replies go back through response promises.
#pragma once
#include <deque>
#include <functional>
#include <vector>

#include <caf/all.hpp>

namespace kevolve {

template <class Handle, class Atom, class Job, class Result>
struct FarmState {
  std::vector<Handle> workers;
  std::vector<int> busy;  // outstanding requests per worker
  std::deque<std::pair<Job, caf::typed_response_promise<Result>>> queue;
};

// Dispatches queued jobs to free workers. `route(job, worker index)` says whether a worker may take a job.
template <class Self, class State, class Atom, class Job, class Result>
void farm_dispatch(Self* self, State& st, std::function<bool(const Job&, size_t)> route = nullptr) {
  for (auto it = st.queue.begin(); it != st.queue.end();) {
    size_t pick = st.workers.size();
    for (size_t w = 0; w < st.workers.size(); ++w)
      if (st.busy[w] == 0 && (!route || route(it->first, w))) {
        pick = w;
        break;
      }
    if (pick == st.workers.size()) {
      if (!route) break;  // no free worker at all: the rest of the queue waits (O(1), not O(queue))
      ++it;
      continue;
    }
    auto job = std::move(it->first);
    auto rp = std::move(it->second);
    it = st.queue.erase(it);
    st.busy[pick] += 1;
    self->request(st.workers[pick], caf::infinite, Atom{}, std::move(job))
        .then(
            [self, pick, rp, route](Result r) mutable {
              rp.deliver(std::move(r));
              auto& s = self->state;
              s.busy[pick] -= 1;
              farm_dispatch<Self, State, Atom, Job, Result>(self, s, route);
            },
            [self, pick, rp, route](caf::error& e) mutable {
              rp.deliver(e);
              auto& s = self->state;
              s.busy[pick] -= 1;
              farm_dispatch<Self, State, Atom, Job, Result>(self, s, route);
            });
  }
}

}  // namespace kevolve
