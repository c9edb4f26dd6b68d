// The dashboard in a real browser: headless Chromium (Debian's `chromium`) loads the page of a real
// `kevolve run --serve` (null backend) and the report.html it writes, runs their scripts, and the test
// reads the DOM Chromium dumps after the page's requests have settled (--virtual-time-budget). Screenshots
// of each page go to build/test-artifacts/dashboard-browser/ (the path is printed). Without chromium the
// test says it is skipped. Under automation (navigator.webdriver) the page polls /api/searches every 3 s
// instead of holding the event stream open, which would keep virtual time from ever running out.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cdp_client.hpp"
#include "chromium.hpp"
#include "dashboard_test_helpers.hpp"

using namespace kevolve::dashboard_test;
namespace fs = std::filesystem;

namespace {

struct Page {
  int rc = -1;
  std::string dom, log;
};

// One headless Chromium run on `url` (a profile of its own under `dir`, so the cookie that ?token= sets
// lives only for this run): the DOM after the page's scripts and requests, and a screenshot to `shot`.
Page load(const std::string& chromium, const std::string& dir, const std::string& url, const std::string& shot) {
  static int n = 0;
  const std::string base = dir + "/chromium-" + std::to_string(++n);
  const std::string out = base + ".dom", err = base + ".log";
  // Virtual time waits for the page's fetches; the event stream never ends, so the budget (virtual, not
  // wall-clock) bounds how long the page runs.
  const pid_t pid = start_chromium(chromium,
                                   {"--enable-automation", "--user-data-dir=" + base + "-profile",
                                    "--virtual-time-budget=5000", "--screenshot=" + shot, "--dump-dom"},
                                   url, out, err);
  Page p;
  p.rc = wait_exit(pid, 180);
  kill(-pid, SIGKILL);  // whatever of its process group is left
  p.dom = slurp(out);
  p.log = slurp(err);
  std::cout << "chromium " << url.substr(0, url.find("token="))
            << (url.find("token=") != std::string::npos ? "token=..." : "") << " -> exit " << p.rc << ", "
            << p.dom.size() << " bytes of DOM, screenshot " << shot << std::endl;
  if (p.rc != 0) std::cout << p.log << std::endl;
  return p;
}

// "evaluated N" of the search view's summary, or the searches table's evaluated cell; -1 when absent.
int64_t shown_evaluated(const std::string& dom) {
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("evaluated ([0-9]+) \\(correct"))) return std::stoll(m[1]);
  if (std::regex_search(dom, m, std::regex("<td class=\"n evaluated\">([0-9]+)</td>"))) return std::stoll(m[1]);
  return -1;
}

int64_t api_evaluated(uint16_t port) {
  auto r = http(port, "GET", "/api/searches", {bearer()});
  return r.status == 200 ? field(r.body, "evaluated") : -1;
}

std::string api_state(uint16_t port) {
  auto r = http(port, "GET", "/api/searches", {bearer()});
  std::smatch m;
  return std::regex_search(r.body, m, std::regex("\"state\":\"([a-z]+)\"")) ? std::string(m[1]) : "";
}

}  // namespace

TEST_CASE("headless Chromium: the live dashboard of kevolve run --serve, and report.html", "[dashboard][browser]") {
  const std::string chromium = chromium_or_skip();
  if (chromium.empty()) return;
  const std::string shots = artefact_dir();
  std::cout << "screenshots: " << shots << std::endl;
  TempDir t;
  const std::string log = t.path + "/run.log", out = t.path + "/out", cfg = t.path + "/run.toml";
  std::ofstream(cfg) << "[search]\nproblem = \"gelu\"\nid = \"dash-test\"\nbackend = \"null\"\noperator = \"null\"\n"
                        "max_in_flight = 2\nbuild_workers = 1\n\n[strategy]\nname = \"greedy\"\n\n[budget]\n"
                        "evaluations = 100000\n\n[store]\npath = \""
                     << t.path << "/store\"\ncheckpoint_seconds = 0\n\n[null]\ndelay_ms = 20\n";
  const pid_t run = spawn({bin("kevolve"), "run", cfg, "--serve", "127.0.0.1:0", "--out", out}, log);
  uint16_t port = 0;
  REQUIRE(wait_for([&] { return (port = dashboard_port(log)) != 0; }, 60));
  REQUIRE(wait_for([&] { return api_evaluated(port) > 0; }, 60));
  const std::string site = "http://127.0.0.1:" + std::to_string(port);

  // Without the token, or with a wrong one: 401, and the browser gets no page.
  CHECK(http(port, "GET", "/").status == 401);
  for (auto* target : {"/", "/?token=not-the-token-0123456789"}) {
    auto p = load(chromium, t.path, site + target, shots + (target[1] ? "/401-wrong-token.png" : "/401-no-token.png"));
    CHECK(p.dom.find("id=\"main\"") == std::string::npos);
    CHECK(p.dom.find("dash-test") == std::string::npos);  // Chromium: "Page load failed: ...RESPONSE_CODE_FAILURE"
  }

  // With it (?token= once: a cookie, then the page): the searches list shows the running search.
  auto list = load(chromium, t.path, site + "/?token=" + kToken, shots + "/searches.png");
  CHECK(list.rc == 0);
  CHECK(list.dom.find("<tr data-search=\"dash-test\">") != std::string::npos);
  CHECK(list.dom.find("<td class=\"state\">running</td>") != std::string::npos);
  const int64_t first = shown_evaluated(list.dom);
  CHECK(first > 0);

  // Later, the search's own view (with node 1 picked, by the address) shows a higher count, the curve,
  // the tree, and node 1's source.
  REQUIRE(wait_for([&] { return api_evaluated(port) > first; }, 60));
  auto view = load(chromium, t.path, site + "/?token=" + kToken + "#/search/dash-test/node/1", shots + "/search.png");
  CHECK(view.rc == 0);
  CHECK(view.dom.find("<h2>dash-test</h2>") != std::string::npos);
  CHECK(view.dom.find("class=\"kv-curve\"") != std::string::npos);
  CHECK(view.dom.find("class=\"kv-tree\"") != std::string::npos);
  CHECK(view.dom.find("data-node=\"1\"") != std::string::npos);
  CHECK(view.dom.find("<summary>source</summary>") != std::string::npos);
  CHECK(view.dom.find("class=\"kv-profile-summary\"") != std::string::npos);  // e.g. the verdict's timeline
  const int64_t second = shown_evaluated(view.dom);
  CHECK(second > first);
  CHECK(view.dom.find("data-action=\"pause\"") != std::string::npos);

  // A user in a live browser: clicks node 1 in the tree and sees its source, then clicks pause.
  Browser user;
  REQUIRE(open_browser(chromium, t.path, site + "/?token=" + kToken + "#/search/dash-test", user));
  REQUIRE(
      wait_for([&] { return user.page.eval("!!document.querySelector('circle[data-node=\"1\"]')") == "true"; }, 60));
  // The tree is laid out by the vendored d3-hierarchy (a tidy tree): no two nodes drawn on the same spot, and
  // every child to the right of its parent.
  CHECK(user.page.eval("typeof d3 === 'object' && typeof d3.tree === 'function'") == "true");
  CHECK(user.page.eval("(function(){var c=[].slice.call(document.querySelectorAll('svg.kv-tree circle[data-node]'));"
                       "var s={};c.forEach(function(e){s[e.getAttribute('cx')+','+e.getAttribute('cy')]=1;});"
                       "return c.length>1&&Object.keys(s).length===c.length;})()") == "true");
  CHECK(user.page.eval("(function(){var ok=true;[].slice.call(document.querySelectorAll('svg.kv-tree line'))"
                       ".forEach(function(l){if(!l.getAttribute('stroke-dasharray')&&+l.getAttribute('x2')<="
                       "+l.getAttribute('x1'))ok=false;});return ok;})()") == "true");
  const std::string source = [&] {
    auto n = http(port, "GET", "/api/search/dash-test/node/1", {bearer()});
    std::smatch m;
    return std::regex_search(n.body, m, std::regex("\"source\":\"([^\"\\\\]{1,40})")) ? std::string(m[1]) : "";
  }();
  REQUIRE(!source.empty());
  const std::string shown_node = "(function(){var b=document.querySelector('.kv-node');return b?b.innerText:'';})()";
  const std::string picked = "(function(){var h=document.querySelector('.kv-node h3');return h?h.innerText:'';})()";
  CHECK(user.page.eval(picked).rfind("node 1 (", 0) != 0);  // another node (or none) is shown before the click
  REQUIRE(click_on(user.page, "circle[data-node=\"1\"]"));
  CHECK(wait_for([&] { return user.page.eval(picked).rfind("node 1 (", 0) == 0; }, 30));
  CHECK(user.page.eval(shown_node).find(source) != std::string::npos);
  // Paused by its button: the search stops proposing, the page says so, and the count stands still.
  REQUIRE(click_on(user.page, "button[data-action=\"pause\"]"));
  REQUIRE(wait_for([&] { return api_state(port) == "paused"; }, 30));
  CHECK(
      wait_for([&] { return user.page.eval("document.body.innerText").find("| paused |") != std::string::npos; }, 30));
  stop_chromium(user.pid);
  int64_t settled = -1;
  REQUIRE(wait_for(
      [&] {
        const int64_t a = api_evaluated(port);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return a == (settled = api_evaluated(port)) && api_state(port) == "paused";
      },
      60));
  auto paused = load(chromium, t.path, site + "/?token=" + kToken + "#/search/dash-test", shots + "/paused.png");
  CHECK(paused.dom.find("| paused |") != std::string::npos);
  CHECK(paused.dom.find("data-action=\"resume\"") != std::string::npos);
  CHECK(shown_evaluated(paused.dom) == settled);
  std::cout << "evaluated as the page showed it: " << first << ", later " << second << ", paused " << settled
            << std::endl;
  auto still = load(chromium, t.path, site + "/?token=" + kToken + "#/search/dash-test", shots + "/paused-later.png");
  CHECK(shown_evaluated(still.dom) == settled);

  REQUIRE(http(port, "POST", "/api/search/dash-test/cancel", {bearer()}).status == 200);
  REQUIRE(wait_exit(run, 120) == 0);

  // report.html over file://: the top table, the search view, and the best node's details.
  const std::string report = out + "/report.html";
  REQUIRE(fs::exists(report));
  auto r = load(chromium, t.path, "file://" + report, shots + "/report.png");
  CHECK(r.rc == 0);
  CHECK(r.dom.find("id=\"top-table\"") != std::string::npos);
  CHECK(r.dom.find("<h2>dash-test</h2>") != std::string::npos);
  CHECK(r.dom.find("class=\"kv-curve\"") != std::string::npos);
  CHECK(r.dom.find("class=\"kv-tree\"") != std::string::npos);
  CHECK(r.dom.find("class=\"kv-box kv-node\"") != std::string::npos);
  CHECK(r.dom.find("<summary>source</summary>") != std::string::npos);
  CHECK(shown_evaluated(r.dom) > 0);
  for (auto* png : {"searches.png", "search.png", "paused.png", "report.png"})
    CHECK(fs::file_size(shots + "/" + png) > 0);
}
