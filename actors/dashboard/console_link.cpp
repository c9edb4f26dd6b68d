#include "actors/dashboard/console_link.hpp"

#include <caf/all.hpp>

#include "actors/protocol/cluster.hpp"

namespace kevolve::dashboard {

Console console_link(caf::actor_system& sys, const caf::actor& registry, double timeout_s) {
  const auto timeout = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(timeout_s));
  return [&sys, registry, timeout](const std::vector<std::string>& words) -> Expected<std::string> {
    caf::scoped_actor self{sys};
    Expected<std::string> out = Expected<std::string>::failure(Errc::unavailable, "no answer");
    self->request(registry, timeout, atoms::console_atom::value, words)
        .receive([&](std::string& answer) { out = Expected<std::string>(std::move(answer)); },
                 [&](caf::error& e) { out = Expected<std::string>::failure(Errc::unavailable, sys.render(e)); });
    return out;
  };
}

}  // namespace kevolve::dashboard
