// The dashboard without the network: the token check, who is let in, which console command each path
// asks, the event format, and the report page's escaping.
#include <catch2/catch.hpp>

#include "runtime/dashboard/dashboard_api.hpp"
#include "runtime/dashboard/dashboard_auth.hpp"
#include "runtime/dashboard/dashboard_page.hpp"

using namespace kevolve;
using namespace kevolve::dashboard;

namespace {

const std::string kToken = "unit-test-token-0123456789";

Request get(const std::string& target, std::map<std::string, std::string> headers = {}) {
  return Request{"GET", target, std::move(headers), ""};
}

// A console that records what it was asked and answers with `answer`.
struct FakeConsole {
  std::vector<std::vector<std::string>> asked;
  std::string answer = "[]\n";
  Console fn() {
    return [this](const std::vector<std::string>& w) -> Expected<std::string> {
      asked.push_back(w);
      return answer;
    };
  }
};

}  // namespace

TEST_CASE("the token check accepts the token only", "[dashboard]") {
  TokenCheck c(kToken);
  CHECK(c.matches(kToken));
  CHECK_FALSE(c.matches(""));
  CHECK_FALSE(c.matches(kToken + "x"));
  CHECK_FALSE(c.matches(kToken.substr(1)));
  CHECK(c.session_matches(c.session()));
  CHECK_FALSE(c.session_matches(kToken));  // the cookie is not the token
  CHECK(c.session().find(kToken) == std::string::npos);
  CHECK(bearer_token("Bearer abc") == "abc");
  CHECK(bearer_token("bearer  abc ") == "abc");
  CHECK(bearer_token("Basic abc").empty());
  CHECK(cookie_value("a=1; kevolve_dashboard=xyz; b=2", "kevolve_dashboard") == "xyz");
  CHECK(cookie_value("kevolve_dashboardx=1", "kevolve_dashboard").empty());
}

TEST_CASE("requests without the token are refused, with it they are let in", "[dashboard]") {
  TokenCheck c(kToken);
  CHECK_FALSE(authorize(get("/api/searches"), c, false).granted);
  CHECK_FALSE(authorize(get("/api/searches", {{"authorization", "Bearer wrong-token-0123456789"}}), c, false).granted);
  CHECK_FALSE(authorize(get("/?token=wrong"), c, false).granted);
  CHECK_FALSE(authorize(get("/", {{"cookie", "kevolve_dashboard=" + kToken}}), c, false).granted);
  CHECK(authorize(get("/api/searches", {{"authorization", "Bearer " + kToken}}), c, false).granted);
  const Response nope = unauthorised();
  CHECK(nope.status == 401);
  CHECK(nope.body.empty());

  // ?token= once: a session cookie (HttpOnly, SameSite=Strict; Secure over TLS) and a redirect without it.
  auto a = authorize(get("/?token=" + kToken), c, true);
  REQUIRE(a.granted);
  REQUIRE(a.login);
  CHECK(a.login->status == 303);
  std::string cookie, location;
  for (auto& [k, v] : a.login->headers) (k == "Set-Cookie" ? cookie : location) = v;
  CHECK(location == "/");
  CHECK(cookie.find("HttpOnly") != std::string::npos);
  CHECK(cookie.find("SameSite=Strict") != std::string::npos);
  CHECK(cookie.find("Secure") != std::string::npos);
  const std::string value = cookie.substr(0, cookie.find(';'));
  auto again = authorize(get("/api/devices", {{"cookie", value}}), c, false);
  CHECK(again.granted);
  CHECK_FALSE(again.login);
}

TEST_CASE("each endpoint asks the console's own command", "[dashboard]") {
  FakeConsole fake;
  auto console = fake.fn();
  CHECK(handle(get("/api/searches"), console).status == 200);
  CHECK(handle(get("/api/devices"), console).status == 200);
  CHECK(handle(get("/api/search/s-1"), console).status == 200);
  CHECK(handle(get("/api/search/s%2D1/node/7"), console).status == 200);
  CHECK(handle(Request{"POST", "/api/search/s-1/pause", {}, ""}, console).status == 200);
  REQUIRE(fake.asked.size() == 5);
  CHECK(fake.asked[0] == std::vector<std::string>{"searches", "--json"});
  CHECK(fake.asked[1] == std::vector<std::string>{"devices", "--json"});
  CHECK(fake.asked[2] == std::vector<std::string>{"tree", "s-1", "--json", "--max-nodes", "3000"});
  CHECK(fake.asked[3] == std::vector<std::string>{"node", "s-1", "7", "--json"});
  CHECK(fake.asked[4] == std::vector<std::string>{"pause", "s-1"});

  // Controls are POSTs; flags cannot be smuggled in as a search id; errors keep their text.
  CHECK(handle(get("/api/search/s-1/pause"), console).status == 405);
  CHECK(handle(get("/api/search/--json"), console).status == 404);
  CHECK(handle(get("/nowhere"), console).status == 404);
  CHECK(fake.asked.size() == 5);
  fake.answer = "error: search 'x' is not running on this node (running: none)\n";
  auto r = handle(Request{"POST", "/api/search/x/cancel", {}, ""}, console);
  CHECK(r.status == 409);
  CHECK(r.body.find("is not running") != std::string::npos);
  fake.answer = "paused\n";
  CHECK(handle(Request{"POST", "/api/search/x/pause", {}, ""}, console).body == "{\"ok\":\"paused\"}\n");

  auto page = handle(get("/"), console);
  CHECK(page.status == 200);
  CHECK(page.content_type.rfind("text/html", 0) == 0);
  CHECK(page.body.find("src=") == std::string::npos);  // self-contained: nothing loaded from anywhere
  CHECK(page.body.find("<link") == std::string::npos);
  CHECK(page.body.find("@import") == std::string::npos);
}

TEST_CASE("an event is one data line", "[dashboard]") {
  FakeConsole fake;
  fake.answer = "[{\"id\":\"a\"},\n{\"id\":\"b\"}]\n";
  const std::string e = next_event(fake.fn(), 3);
  CHECK(e == "id: 3\nevent: searches\ndata: [{\"id\":\"a\"}, {\"id\":\"b\"}]\n\n");
  Console down = [](const std::vector<std::string>&) -> Expected<std::string> {
    return Expected<std::string>::failure(Errc::unavailable, "gone");
  };
  CHECK(next_event(down, 4).find("event: error") != std::string::npos);
}

TEST_CASE("the report page cannot be broken out of by the data it embeds", "[dashboard]") {
  const std::string page = report_page("t<i>", "sum </pre>", "{\"s\":\"</script><script>alert(1)</script>\"}");
  CHECK(page.find("</script><script>alert") == std::string::npos);
  CHECK(page.find("\\u003c/script>") != std::string::npos);
  CHECK(page.find("t&lt;i&gt;") != std::string::npos);
  CHECK(page.find("sum &lt;/pre&gt;") != std::string::npos);
}
