// The dashboard's web server (Boost.Beast, HTTP/1.1; HTTPS with the node's certificate and key when
// given). One thread per connection, at most `max_connections` at once; a connection that has not sent a
// complete request within `timeout_s` (or does not take its answer within it) is closed, and so is an
// idle keep-alive connection. Requests are bounded (headers 8 KiB, body 16 KiB). What each request gets
// is dashboard_api's; the event stream is written here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/dashboard/dashboard_api.hpp"
#include "runtime/core/expected.hpp"

namespace kevolve::dashboard {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;              // 0: any free port
  std::string token;              // what a request must show (dashboard_auth.hpp)
  std::string tls_cert, tls_key;  // both: HTTPS
  double timeout_s = 20;
  double event_period_s = 2;  // the `retry` delay of the event stream: one event per request, this apart
  int max_connections = 32;
  size_t max_header = 8 * 1024, max_body = 16 * 1024;
};

// A running server (its own threads). Destroying it closes the listener and every connection.
class Server {
 public:
  virtual ~Server() = default;
  virtual uint16_t port() const = 0;
  virtual bool tls() const = 0;
};

// Listens and serves until destroyed. Errc::unavailable when the address cannot be bound,
// Errc::invalid_argument when the token is shorter than 16 characters or the TLS files do not load.
Expected<std::unique_ptr<Server>> open_server(const ServerOptions& o, Console console);

}  // namespace kevolve::dashboard
