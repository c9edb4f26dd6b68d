// ProviderGate: what one provider allows, shared by every request of the operator — at most `concurrency`
// requests in flight, at most `requests_per_minute` started per minute, and one back-off: when any request
// is told to wait (429, 529, 5xx, a timeout), no request of the operator starts before that wait is over.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kevolve::llm {

class ProviderGate {
 public:
  using Clock = std::chrono::steady_clock;
  // concurrency <= 0 and requests_per_minute <= 0 mean no limit.
  ProviderGate(int concurrency, double requests_per_minute)
      : limit_(concurrency), spacing_(requests_per_minute > 0 ? 60.0 / requests_per_minute : 0) {}

  // Blocks until a request may start (no back-off pending, a free slot, the per-minute spacing kept) and
  // takes a slot; leave() gives it back.
  void enter();
  void leave();
  // No request starts before now + seconds (a later wait already set is kept).
  void back_off(double seconds);
  // How many times a request start was held back by a back-off (its own or another request's).
  int64_t backoff_waits() const;

  // Where the gate stands now: requests on the wire, requests waiting to start, and when the back-off ends
  // (a time point in the past when none is pending).
  struct State {
    int in_flight = 0, waiting = 0;
    Clock::time_point backoff_until{};
  };
  State state() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int limit_;
  double spacing_;
  int in_flight_ = 0, waiting_ = 0;
  Clock::time_point not_before_{}, last_start_{};
  int64_t backoff_waits_ = 0;
};

}  // namespace kevolve::llm
