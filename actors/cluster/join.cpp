#include "actors/cluster/join.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "actors/cluster/hmac.hpp"
#include "actors/protocol/cluster.hpp"

namespace kevolve::cluster {

Expected<std::string> secret_from_env(const std::string& var) {
  const char* v = std::getenv(var.c_str());
  if (!v || !*v)
    return Expected<std::string>::failure("the shared secret: environment variable " + var +
                                          " is not set (the node's [cluster] secret_env)");
  return std::string(v);
}

Expected<caf::actor> join(caf::actor_system& sys, const std::string& host, uint16_t port, const std::string& secret,
                          const std::string& role, JoinError* why, const DoorTls& tls) {
  using R = Expected<caf::actor>;
  auto fail = [&](const std::string& text, bool refused) {
    if (why) *why = {text, refused};
    return R::failure(text);
  };
  TunnelError terr;
  auto tunnel = open_tunnel(host, port, secret, role, tls, 10, &terr);
  if (!tunnel) return fail(tunnel.error(), terr.refused);
  const uint16_t local = (*tunnel)->local_port();
  {
    // The tunnel relays as long as the connection lives; kept for the life of the process.
    static std::mutex m;
    static std::vector<std::unique_ptr<Tunnel>> open;
    std::lock_guard<std::mutex> lock(m);
    open.push_back(std::move(*tunnel));
  }
  auto gate = sys.middleman().remote_actor<gatekeeper_actor>("127.0.0.1", local);
  if (!gate) return fail("cannot reach " + host + ":" + std::to_string(port) + ": " + sys.render(gate.error()), false);
  caf::scoped_actor self{sys};
  std::string nonce, err;
  self->request(*gate, std::chrono::seconds(10), atoms::hello_atom::value)
      .receive([&](std::string& n) { nonce = std::move(n); }, [&](caf::error& e) { err = sys.render(e); });
  if (!err.empty()) return fail("no challenge from " + host + ":" + std::to_string(port) + ": " + err, false);
  caf::actor registry;
  std::string reason;
  self->request(*gate, std::chrono::seconds(10), atoms::prove_atom::value, nonce, role, prove(secret, nonce, role))
      .receive(
          [&](std::string& r, caf::actor& h) {
            reason = std::move(r);
            registry = std::move(h);
          },
          [&](caf::error& e) { err = sys.render(e); });
  if (!err.empty()) return fail("no answer to the proof from " + host + ":" + std::to_string(port) + ": " + err, false);
  if (!reason.empty() || !registry)
    return fail("refused by " + host + ":" + std::to_string(port) + ": " + reason, true);
  return registry;
}

}  // namespace kevolve::cluster
