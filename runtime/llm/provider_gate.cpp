#include "runtime/llm/provider_gate.hpp"

namespace kevolve::llm {

void ProviderGate::enter() {
  std::unique_lock<std::mutex> lock(mu_);
  bool waited_for_backoff = false;
  ++waiting_;
  for (;;) {
    const auto now = Clock::now();
    auto ready = not_before_;
    if (spacing_ > 0 && last_start_ != Clock::time_point{})
      ready = std::max(
          ready, last_start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spacing_)));
    if (now < ready) {
      if (now < not_before_) waited_for_backoff = true;
      cv_.wait_until(lock, ready);
      continue;
    }
    if (limit_ > 0 && in_flight_ >= limit_) {
      cv_.wait(lock);
      continue;
    }
    break;
  }
  if (waited_for_backoff) ++backoff_waits_;
  --waiting_;
  ++in_flight_;
  last_start_ = Clock::now();
}

void ProviderGate::leave() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  cv_.notify_all();
}

void ProviderGate::back_off(double seconds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    if (until > not_before_) not_before_ = until;
  }
  cv_.notify_all();
}

ProviderGate::State ProviderGate::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {in_flight_, waiting_, not_before_};
}

int64_t ProviderGate::backoff_waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return backoff_waits_;
}

}  // namespace kevolve::llm
