// The cluster's wall: the only thing a node exposes to the network. CAF's middleman listens on loopback
// only; the front door listens on the node's address, authenticates every connection before a single
// byte reaches CAF, and then relays the connection's bytes to and from CAF's loopback port.
//
//   client (evaluator, console)                 front door (node)
//   [TLS handshake, when configured: both sides present a certificate of the cluster's CA]
//                                <- "KEVOLVE-CLUSTER 1 <nonce>\n"     nonce: 16 random bytes, this connection's own
//   "<role> <hmac>\n" ->                                               hmac = HMAC-SHA256(secret, nonce|role)
//                                <- "OK\n" | "NO <reason>\n" (then closed)
//   ... BASP bytes, relayed both ways to 127.0.0.1:<CAF port>
//
// A peer without the secret never reaches BASP, so no actor of the node can be addressed, asked, killed or
// impersonated by it; a proof is bound to the nonce of its own connection (a proof taken from one
// connection is worthless on another). Handshakes are limited per peer address, must finish within 10 s,
// and every refusal is logged with the peer's address. A failed or hostile connection never touches CAF
// or the established connections. On the client side, `open_tunnel` does the same handshake and gives CAF
// a loopback port that relays to the node.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::cluster {

// Certificate, key and CA file of TLS between cluster processes: all three, or TLS is off.
struct DoorTls {
  std::string cert, key, ca;  // all three (TLS with certificates of one CA on both sides), or none
  bool on() const { return !cert.empty(); }
  // Some but not all three given: refused (without a CA the peer is not authenticated).
  bool partial() const {
    const int n = !cert.empty() + !key.empty() + !ca.empty();
    return n != 0 && n != 3;
  }
};

struct DoorOptions {
  std::string host = "127.0.0.1";  // where the door listens
  uint16_t port = 0;               // 0: any free port
  uint16_t backend_port = 0;       // CAF's loopback port the door relays to
  std::string secret;
  DoorTls tls;
  double handshakes_per_s = 20;     // per peer address, with a burst of twice that
  double handshake_timeout_s = 10;  // a connection that has not proven the secret by then is closed
};

// A running door (its own I/O thread). Destroying it closes the listener and every connection.
class FrontDoor {
 public:
  virtual ~FrontDoor() = default;
  virtual uint16_t port() const = 0;  // where it listens
};

// Listens and serves until destroyed. An error when the address cannot be bound or the TLS files fail.
Expected<std::unique_ptr<FrontDoor>> open_front_door(const DoorOptions& o);

// The client's half of one connection, already authenticated: CAF connects to 127.0.0.1:local_port().
class Tunnel {
 public:
  virtual ~Tunnel() = default;
  virtual uint16_t local_port() const = 0;
};

struct TunnelError {
  std::string text;
  bool refused = false;  // the node answered NO (wrong secret, unknown role): retrying will not help
};

// Connects to the node's door, proves the secret for `role` (evaluator | console) and returns a tunnel
// whose loopback port CAF's remote_actor can use once. Fails within `timeout_s`.
Expected<std::unique_ptr<Tunnel>> open_tunnel(const std::string& host, uint16_t port, const std::string& secret,
                                              const std::string& role, const DoorTls& tls, double timeout_s,
                                              TunnelError* why = nullptr);

// Whether a listen address is on this machine only (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

}  // namespace kevolve::cluster
