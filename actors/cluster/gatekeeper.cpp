#include "actors/cluster/gatekeeper.hpp"

#include <chrono>
#include <iostream>
#include <map>

#include "actors/cluster/hmac.hpp"

namespace kevolve {
namespace {

using Clock = std::chrono::steady_clock;

struct GatekeeperState {
  std::string secret;
  caf::actor registry;
  std::map<std::string, Clock::time_point> challenges;  // open nonces and when they were issued
  static inline const char* name = "gatekeeper";
};

gatekeeper_actor::behavior_type gatekeeper(gatekeeper_actor::stateful_pointer<GatekeeperState> self, std::string secret,
                                           caf::actor registry) {
  self->state.secret = std::move(secret);
  self->state.registry = std::move(registry);
  return {
      [self](atoms::hello_atom) -> std::string {
        auto& ch = self->state.challenges;
        const auto now = Clock::now();
        for (auto it = ch.begin(); it != ch.end();)
          it = now - it->second > std::chrono::minutes(1) ? ch.erase(it) : std::next(it);
        if (ch.size() > 4096) ch.erase(ch.begin());  // bounded: a flood of hellos cannot grow it
        std::string n = cluster::make_nonce();
        ch[n] = now;
        return n;
      },
      [self](atoms::prove_atom, const std::string& nonce, const std::string& role,
             const std::string& mac) -> caf::result<std::string, caf::actor> {
        auto& ch = self->state.challenges;
        auto it = ch.find(nonce);
        const bool known = it != ch.end() && Clock::now() - it->second <= std::chrono::minutes(1);
        if (it != ch.end()) ch.erase(it);  // single use, right or wrong
        std::string why;
        if (!known)
          why = "unknown or expired challenge";
        else if (role != "evaluator" && role != "console")
          why = "unknown role '" + role + "'";
        else if (!cluster::verify(self->state.secret, nonce, role, mac))
          why = "wrong proof of the shared secret";
        if (!why.empty()) {
          auto from = self->current_sender();
          std::cerr << "kevolve node: refused a " << role << " peer"
                    << (from ? " from node " + to_string(from->node()) : std::string()) << ": " << why << "\n";
          return {why, caf::actor{}};
        }
        return {std::string(), self->state.registry};
      },
  };
}

}  // namespace

gatekeeper_actor spawn_gatekeeper(caf::actor_system& sys, std::string secret, caf::actor registry) {
  return sys.spawn(gatekeeper, std::move(secret), std::move(registry));
}

}  // namespace kevolve
