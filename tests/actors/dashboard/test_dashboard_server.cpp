// The dashboard of a real `kevolve run --serve` (null backend) and of a real `kevolve node`, over real
// HTTP on a loopback port: the token, the live counts, the controls, the event stream, and the report.
#include <catch2/catch.hpp>

#include "dashboard_test_helpers.hpp"

using namespace kevolve::dashboard_test;

namespace {

// A null-backend search slow enough to watch (each evaluation takes delay_ms).
std::string write_config(const std::string& dir, const std::string& extra = "") {
  const std::string path = dir + "/run.toml";
  std::ofstream(path) << "[search]\nproblem = \"gelu\"\nid = \"dash-test\"\nbackend = \"null\"\noperator = \"null\"\n"
                         "max_in_flight = 2\nbuild_workers = 1\n\n[strategy]\nname = \"greedy\"\n\n[budget]\n"
                         "evaluations = 100000\n\n[store]\npath = \""
                      << dir << "/store\"\ncheckpoint_seconds = 0\n\n[null]\ndelay_ms = 20\n"
                      << extra;
  return path;
}

int64_t evaluated(uint16_t port) {
  auto r = http(port, "GET", "/api/searches", {bearer()});
  return r.status == 200 ? field(r.body, "evaluated") : -1;
}

std::string state(uint16_t port) {
  auto r = http(port, "GET", "/api/searches", {bearer()});
  std::smatch m;
  return std::regex_search(r.body, m, std::regex("\"state\":\"([a-z]+)\"")) ? std::string(m[1]) : "";
}

}  // namespace

TEST_CASE("kevolve run --serve: token, live counts, controls, events, and the report's best", "[dashboard]") {
  TempDir t;
  const std::string log = t.path + "/run.log", out = t.path + "/out";
  const pid_t run = spawn({bin("kevolve"), "run", write_config(t.path), "--serve", "127.0.0.1:0", "--out", out}, log);
  uint16_t port = 0;
  REQUIRE(wait_for([&] { return (port = dashboard_port(log)) != 0; }, 60));

  // Without the token, or with a wrong one: 401 and nothing else.
  for (auto* target : {"/", "/api/searches", "/api/events", "/api/search/dash-test", "/nowhere"}) {
    auto r = http(port, "GET", target);
    CHECK(r.status == 401);
    CHECK(r.body.empty());
    auto w = http(port, "GET", target, {"Authorization: Bearer not-the-token-0123456789"});
    CHECK(w.status == 401);
    CHECK(w.body.empty());
  }
  CHECK(http(port, "POST", "/api/search/dash-test/pause").status == 401);

  // With it: the page, and ?token= once gives a cookie that lets the page's own requests in.
  auto page = http(port, "GET", "/", {bearer()});
  CHECK(page.status == 200);
  CHECK(page.body.find("KV.searchView") != std::string::npos);
  auto login = http(port, "GET", std::string("/?token=") + kToken);
  REQUIRE(login.status == 303);
  std::smatch m;
  REQUIRE(std::regex_search(login.head, m, std::regex("Set-Cookie: (kevolve_dashboard=[0-9a-f]+); [^\r]*HttpOnly")));
  const std::string cookie = "Cookie: " + std::string(m[1]);
  CHECK(http(port, "GET", "/api/searches", {cookie}).status == 200);

  // The running search's count moves.
  int64_t first = -1;
  REQUIRE(wait_for([&] { return (first = evaluated(port)) > 0; }, 60));
  REQUIRE(wait_for([&] { return evaluated(port) > first; }, 60));
  CHECK(state(port) == "running");

  // One search: nodes, curve; one node: its source and verdict.
  auto search = http(port, "GET", "/api/search/dash-test", {bearer()});
  CHECK(search.status == 200);
  CHECK(search.body.find("\"curve\":[") != std::string::npos);
  CHECK(search.body.find("\"nodes\":[{\"id\":1,") != std::string::npos);
  auto node = http(port, "GET", "/api/search/dash-test/node/1", {bearer()});
  CHECK(node.status == 200);
  CHECK(node.body.find("\"source\":") != std::string::npos);
  CHECK(node.body.find("\"status\":") != std::string::npos);
  CHECK(http(port, "GET", "/api/search/no-such-search", {bearer()}).status == 404);

  // The event stream delivers the searches.
  auto events = http(port, "GET", "/api/events", {cookie}, "", "event: searches");
  CHECK(events.status == 200);
  CHECK(events.head.find("text/event-stream") != std::string::npos);
  CHECK(events.body.find("\"id\":\"dash-test\"") != std::string::npos);

  // Pause through the console's command: the state says so; resume; cancel ends the run.
  auto paused = http(port, "POST", "/api/search/dash-test/pause", {bearer()});
  CHECK(paused.status == 200);
  CHECK(wait_for([&] { return state(port) == "paused"; }, 30));
  CHECK(http(port, "POST", "/api/search/dash-test/resume", {bearer()}).status == 200);
  CHECK(wait_for([&] { return state(port) == "running"; }, 30));
  CHECK(http(port, "POST", "/api/search/dash-test/cancel", {cookie}).status == 200);
  REQUIRE(wait_exit(run, 120) == 0);

  // report.html: the view's data, whose ringed best is the node the text names.
  const std::string html = slurp(out + "/report.html");
  REQUIRE(!html.empty());
  REQUIRE(std::regex_search(html, m, std::regex("best: node ([0-9]+)")));
  const std::string named = m[1];
  const size_t data = html.find("<script type='application/json' id='kv-data'>");
  REQUIRE(data != std::string::npos);
  CHECK(field(html.substr(data), "best_node") == std::stoll(named));
  CHECK(html.find("\"nodes\":{\"1\":{") != std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
}

TEST_CASE("the dashboard refuses to start without a token or on an open address without TLS", "[dashboard]") {
  TempDir t;
  const std::string log = t.path + "/run.log";
  // An address other machines can reach, plain HTTP: refused by the config loader.
  const std::string open = write_config(t.path, "\n[dashboard]\nlisten = \"0.0.0.0:0\"\n");
  CHECK(wait_exit(spawn({bin("kevolve"), "run", open}, log), 60) == 2);
  CHECK(slurp(log).find("reachable from other machines") != std::string::npos);
  // No token in the variable the config names.
  const std::string none =
      write_config(t.path, "\n[dashboard]\nlisten = \"127.0.0.1:0\"\ntoken_env = \"NO_SUCH_VAR\"\n");
  CHECK(wait_exit(spawn({bin("kevolve"), "run", none}, log), 60) == 2);
  CHECK(slurp(log).find("$NO_SUCH_VAR") != std::string::npos);
}

TEST_CASE("kevolve node serves the dashboard from [dashboard] listen, with its devices", "[dashboard]") {
  TempDir t;
  bool started = false;
  const BusyNode n = start_node_with_evaluator(t.path, "node-dash", 2, 20, started);
  REQUIRE(started);
  const uint16_t port = n.dashboard;
  const pid_t node = n.node, ev = n.evaluator;
  CHECK(http(port, "GET", "/api/devices").status == 401);
  CHECK(wait_for([&] { return field(http(port, "GET", "/api/devices", {bearer()}).body, "index") >= 0; }, 60));
  CHECK(wait_for([&] { return evaluated(port) > 0; }, 60));
  CHECK(http(port, "POST", "/api/search/node-dash/cancel", {bearer()}).status == 200);
  CHECK(wait_exit(node, 120) == 0);
  CHECK(wait_exit(ev, 60) >= 0);
}
