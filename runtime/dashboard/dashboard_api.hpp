// The dashboard's requests and answers, without the network: the server (dashboard_server.cpp) parses
// HTTP into a Request and writes the Response; everything here is plain C++ and testable alone.
//
// Every answer about the engine comes from the console (runtime/views/console_service) through `Console`,
// the same commands `kevolve-console` sends:
//   GET  /                           the page (runtime/dashboard/dashboard_page)
//   GET  /api/searches               searches --json
//   GET  /api/search/ID              tree ID --json   (summary, nodes, best-so-far curve, failure mix)
//   GET  /api/search/ID/node/N       node ID N --json (source and its parent's, verdict, timings, diagnosis)
//   GET  /api/devices                devices --json
//   GET  /api/stats                  stats --json
//   GET  /api/events                 Server-Sent Events: one `searches --json` event and `retry`, then the end
//   POST /api/search/ID/pause|resume|cancel   pause|resume|cancel ID
// Without the token (dashboard_auth.hpp) the answer is 401 with an empty body, whatever the path.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/dashboard/dashboard_auth.hpp"
#include "runtime/core/expected.hpp"

namespace kevolve::dashboard {

// Asks the engine one console command; an error when the console did not answer (stopped, timed out).
using Console = std::function<Expected<std::string>(const std::vector<std::string>& words)>;

struct Request {
  std::string method;                          // GET, POST, ...
  std::string target;                          // path and query
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type;  // "" with an empty body
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beside the security headers every answer has
};

// How a request is let in.
struct Access {
  bool granted = false;
  std::optional<Response> login;  // `?token=` accepted: set the cookie and redirect to the same path without it
};

// Checks the request's bearer token, session cookie or `?token=`. `tls`: the cookie is marked Secure.
Access authorize(const Request& r, const TokenCheck& check, bool tls);

// The 401 every unauthorised request gets (no page, no JSON).
Response unauthorised();

// Whether the request asks for the event stream (GET /api/events).
bool wants_events(const Request& r);

// One event of the stream: "event: searches\ndata: JSON\n\n" (or an `event: error` when the console fails).
std::string next_event(const Console& console, uint64_t id);

// The answer to an authorised request other than the event stream.
Response handle(const Request& r, const Console& console);

// The path of a target, percent-decoded ("" when it is malformed); `query` gets what follows '?'.
std::string decode_path(const std::string& target, std::string* query = nullptr);

}  // namespace kevolve::dashboard
