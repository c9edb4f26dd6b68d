#include "runtime/dashboard/dashboard_api.hpp"

#include <optional>

#include "runtime/dashboard/dashboard_page.hpp"
#include "runtime/core/json.hpp"

namespace kevolve::dashboard {
namespace {

// The most nodes a search page is sent (tree --max-nodes): a browser draws a few thousand at ease.
constexpr size_t kPageTreeNodes = 3000;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; nullopt on a bad escape or a NUL.
std::optional<std::string> percent_decode(const std::string& s, bool plus_is_space) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int a = hex_digit(s[i + 1]), b = hex_digit(s[i + 2]);
      if (a < 0 || b < 0 || (a == 0 && b == 0)) return std::nullopt;
      o += static_cast<char>(a * 16 + b);
      i += 2;
    } else {
      o += plus_is_space && s[i] == '+' ? ' ' : s[i];
    }
  }
  return o;
}

// The value of `name` in a query string ("" when absent).
std::string query_value(const std::string& query, const std::string& name) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string pair = query.substr(pos, amp - pos);
    const size_t eq = pair.find('=');
    if (eq != std::string::npos && pair.substr(0, eq) == name)
      return percent_decode(pair.substr(eq + 1), true).value_or("");
    pos = amp + 1;
  }
  return "";
}

std::string header(const Request& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

Response json_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

Response error(int status, const std::string& text) {
  return json_response(status, "{\"error\":" + json::quote(text) + "}\n");
}

// A console answer as a response: JSON as it is, an "error: ..." line as `error_status`.
Response from_console(const Console& console, const std::vector<std::string>& words, int error_status) {
  auto answer = console(words);
  if (!answer) return error(503, "the engine did not answer: " + answer.error());
  std::string text = *answer;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.rfind("error: ", 0) == 0) return error(error_status, text.substr(7));
  if (!text.empty() && (text.front() == '{' || text.front() == '[')) return json_response(200, text + "\n");
  return json_response(200, "{\"ok\":" + json::quote(text) + "}\n");
}

// A search id or node number as one console word: no flags, no spaces.
bool plain_word(const std::string& w) {
  if (w.empty() || w.front() == '-' || w.size() > 256) return false;
  for (char c : w)
    if (static_cast<unsigned char>(c) <= ' ') return false;
  return true;
}

}  // namespace

std::string decode_path(const std::string& target, std::string* query) {
  const size_t q = target.find('?');
  if (query) *query = q == std::string::npos ? "" : target.substr(q + 1);
  auto path = percent_decode(target.substr(0, q), false);
  if (!path || path->empty() || path->front() != '/') return "";
  return *path;
}

Access authorize(const Request& r, const TokenCheck& check, bool tls) {
  Access a;
  if (auto bearer = bearer_token(header(r, "authorization")); !bearer.empty() && check.matches(bearer)) {
    a.granted = true;
    return a;
  }
  std::string query;
  const std::string path = decode_path(r.target, &query);
  if (const std::string t = query_value(query, "token"); !t.empty() && check.matches(t) && r.method == "GET") {
    Response login;
    login.status = 303;
    login.headers.push_back({"Location", path.empty() ? "/" : path});
    login.headers.push_back({"Set-Cookie", std::string(kCookie) + "=" + check.session() +
                                               "; Path=/; HttpOnly; SameSite=Strict" + (tls ? "; Secure" : "")});
    a.granted = true;
    a.login = std::move(login);
    return a;
  }
  if (const std::string c = cookie_value(header(r, "cookie"), kCookie); !c.empty() && check.session_matches(c))
    a.granted = true;
  return a;
}

Response unauthorised() {
  Response r;
  r.status = 401;
  r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"kevolve\""});
  return r;
}

bool wants_events(const Request& r) { return r.method == "GET" && decode_path(r.target) == "/api/events"; }

std::string next_event(const Console& console, uint64_t id) {
  auto answer = console({"searches", "--json"});
  std::string data = answer ? *answer : "{\"error\":" + json::quote(answer.error()) + "}";
  while (!data.empty() && data.back() == '\n') data.pop_back();
  for (auto& c : data)
    if (c == '\n' || c == '\r') c = ' ';  // one data line (JSON strings carry their newlines escaped)
  const bool failed = !answer || data.rfind("error: ", 0) == 0;
  return "id: " + std::to_string(id) + "\nevent: " + (failed ? "error" : "searches") + "\ndata: " + data + "\n\n";
}

Response handle(const Request& r, const Console& console) {
  const std::string path = decode_path(r.target);
  if (path.empty()) return error(400, "malformed path");
  const auto p = split_path(path);
  const bool get = r.method == "GET" || r.method == "HEAD", post = r.method == "POST";
  if (path == "/" || path == "/index.html") {
    if (!get) return error(405, "GET only");
    Response page;
    page.content_type = "text/html; charset=utf-8";
    page.body = dashboard_page();
    return page;
  }
  if (p.empty() || p[0] != "api") return error(404, "no such page: " + path);
  if (p.size() == 2 && (p[1] == "searches" || p[1] == "devices" || p[1] == "stats")) {
    if (!get) return error(405, "GET only");
    return from_console(console, {p[1], "--json"}, 500);
  }
  if (p.size() >= 3 && p[1] == "search" && plain_word(p[2])) {
    const std::string& id = p[2];
    if (p.size() == 3) {
      if (!get) return error(405, "GET only");
      // A page draws at most a few thousand nodes: the notable ones of a larger search (the curve and the
      // counts still cover every node).
      return from_console(console, {"tree", id, "--json", "--max-nodes", std::to_string(kPageTreeNodes)}, 404);
    }
    if (p.size() == 5 && p[3] == "node" && plain_word(p[4])) {
      if (!get) return error(405, "GET only");
      return from_console(console, {"node", id, p[4], "--json"}, 404);
    }
    if (p.size() == 4 && (p[3] == "pause" || p[3] == "resume" || p[3] == "cancel")) {
      if (!post) return error(405, "POST only");
      return from_console(console, {p[3], id}, 409);
    }
  }
  return error(404, "no such endpoint: " + path);
}

}  // namespace kevolve::dashboard
