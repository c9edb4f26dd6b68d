// The cluster's only transport: authenticated, framed connections between a node and its evaluators and
// consoles (Boost.Asio, OpenSSL; no CAF). Nothing here speaks to a peer that has not proven its role's key,
// and a client speaks only to a node that has proven the same key back (docs/cluster.md has the threat model).
//
//   client                                            node (listen)
//   [TLS, when configured: certificates of one CA both ways; the client checks the node's name]
//                                 <- "KEVOLVE-CLUSTER 2 <node nonce>\n"
//   "<role> <peer nonce> <peer proof>\n" ->          role: console | evaluator:<host>
//                                 <- "OK <node proof>\n" | "NO <reason>\n" (then closed)
//   frames both ways: u32 little-endian length of what follows, u8 kind, payload (kind 0: heartbeat)
//
// Proofs: runtime/net/peer_proof.hpp. Each role has its own key: a key that lets a machine evaluate does
// not let it run console commands, and an evaluator proves the key of the host it names (derived from the
// cluster's evaluator key: net::host_key), so one evaluator machine's key cannot speak for another. Before authentication a connection may hold at most a handshake line;
// after it, a frame's length is checked against the limit before a byte of it is buffered, and buffers grow
// only with bytes that really arrived.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::net {

enum class Role { evaluator, console };
const char* role_name(Role r);
std::optional<Role> parse_role(const std::string& s);

// Certificate, key and CA of TLS between cluster processes: all three, or TLS is off. `server_name`
// (clients): the name the node's certificate must carry; default the host the client connects to.
struct LinkTls {
  std::string cert, key, ca, server_name;
  bool on() const { return !cert.empty(); }
  bool partial() const {
    const int n = !cert.empty() + !key.empty() + !ca.empty();
    return n != 0 && n != 3;
  }
};

// Each role's key on the node (an empty key: that role is refused). Evaluators prove host_key(evaluator, host).
struct RoleKeys {
  std::string evaluator, console;
  const std::string& of(Role r) const { return r == Role::evaluator ? evaluator : console; }
};

constexpr uint8_t kHeartbeatFrame = 0;

struct LinkLimits {
  uint32_t max_frame_bytes = 160u << 20;  // a job carries its build folder's files (64 MiB each at most)
  size_t max_queued_bytes = 512u << 20;   // frames waiting to be written; beyond it the link is closed
  double heartbeat_s = 1;                 // a heartbeat frame this often; lost after `missed` silent periods
  int missed = 5;
};

// One authenticated connection. Thread-safe.
class Link {
 public:
  virtual ~Link() = default;
  virtual Role role() const = 0;
  virtual const std::string& peer() const = 0;  // "address:port" of the other side
  virtual const std::string& host() const = 0;  // the host an evaluator link proved the key of ("" for consoles)
  // Queues one frame (kind > 0). False when the link is closed (or its queue overflowed: it is closed then).
  virtual bool send(uint8_t kind, std::string payload) = 0;
  // Closes after the frames already queued are written (at most a second). Idempotent.
  virtual void close(const std::string& why) = 0;
};

// Called on the link's I/O thread: each frame in order, then once when the link ends.
struct LinkHandlers {
  std::function<void(uint8_t kind, std::string payload)> on_frame;
  std::function<void(const std::string& why)> on_close;
};

struct ListenOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port
  RoleKeys keys;
  LinkTls tls;
  LinkLimits limits;
  double handshakes_per_s = 20;     // per peer address, bursts of twice that
  double handshake_timeout_s = 10;  // a connection without a proof by then is closed
  // Connections still proving themselves, machine-wide: at the cap the oldest is closed for the newest (a
  // legitimate peer proves itself in milliseconds; a flood of idle ones cannot hold the door shut).
  size_t max_unauthenticated = 512;
  size_t max_links = 4096;  // authenticated connections
  // Each authenticated connection, on the I/O thread; its handlers are installed before a frame is read.
  std::function<LinkHandlers(std::shared_ptr<Link>)> on_link;
  // Refusals and other events worth a line (already escaped and rate-limited); default stderr.
  std::function<void(const std::string&)> log;
};

class Listener {
 public:
  virtual ~Listener() = default;  // stops listening and closes every connection
  virtual uint16_t port() const = 0;
};

// Listens and serves on its own I/O thread until destroyed. An error when the address cannot be bound or
// the TLS files fail.
Expected<std::unique_ptr<Listener>> listen(ListenOptions o);

struct ConnectOptions {
  std::string host;
  uint16_t port = 0;
  Role role = Role::evaluator;
  std::string key;        // the console key, or the host key of `host_name` (evaluators)
  std::string host_name;  // evaluators: the host whose key `key` is
  LinkTls tls;
  LinkLimits limits;
  double timeout_s = 10;
};

struct ConnectError {
  std::string text;
  bool refused = false;   // the node said NO (wrong key, unknown role): retrying will not help
  bool impostor = false;  // the other side could not prove the key: it is not our node
};

// Connects, proves the role's key, checks the node's proof, installs `h` and starts the link's own I/O
// thread. Fails within timeout_s.
Expected<std::shared_ptr<Link>> connect(const ConnectOptions& o, LinkHandlers h, ConnectError* why = nullptr);

// Whether a listen address is on this machine only (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

// `s` with every byte outside printable ASCII written as \xNN, cut to `max` characters (for logs).
std::string escaped(const std::string& s, size_t max = 64);

}  // namespace kevolve::net
