// The dashboard of a busy node in a real browser: `kevolve node` (null backend) with an evaluator joined
// (`--devices 2`) dispatching hundreds of evaluations per second, its page opened in nine tabs of one
// headless Chromium driven over the DevTools protocol: the searches table, a search's page (curve and tree)
// and the devices table, each twice with the event stream and once with polling (navigator.webdriver set
// for those tabs, as under automation; false for the others, as in a user's browser). Every tab
// stays open while the next one loads, as a user's tabs do: a page that held a connection for as long as it
// lived would leave the later tabs waiting on the browser's six connections per host. Without chromium the
// test says it is skipped.
#include <catch2/catch.hpp>

#include <chrono>

#include "chromium.hpp"

using namespace kevolve::dashboard_test;

namespace {

int64_t api_evaluated(uint16_t port) {
  auto r = http(port, "GET", "/api/searches", {bearer()});
  return r.status == 200 ? field(r.body, "evaluated") : -1;
}

// Evaluations per second the node reports over a window of `seconds`.
double rate(uint16_t port, double seconds) {
  const int64_t a = api_evaluated(port);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const int64_t b = api_evaluated(port);
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a < 0 || b < 0 ? 0 : static_cast<double>(b - a) / dt;
}

struct Tab {
  std::string name, fragment, shown;  // shown: a JavaScript expression, "true" once the view is drawn
  bool polling = false;
};

}  // namespace

TEST_CASE("headless Chromium: a busy node's dashboard in nine open tabs (event stream and polling)",
          "[dashboard][browser]") {
  const std::string chromium = chromium_or_skip();
  if (chromium.empty()) return;
  TempDir t;
  bool started = false;
  const BusyNode n = start_node_with_evaluator(t.path, "busy-node", 64, 1, started);
  REQUIRE(started);
  const uint16_t port = n.dashboard;
  // The case users have: the node busy (>= 300 evaluations/s) before any page opens.
  double busy = 0;
  CHECK(wait_for([&] { return (busy = rate(port, 2)) >= 300; }, 120));
  std::cout << "node busy: " << static_cast<int>(busy) << " evaluations/s" << std::endl;

  const std::string site = "http://127.0.0.1:" + std::to_string(port) + "/?token=" + kToken;
  Browser b;
  // As a user's browser: pages see navigator.webdriver false (headless Chromium says true otherwise).
  REQUIRE(open_browser(chromium, t.path, "about:blank", b, {"--disable-blink-features=AutomationControlled"}));
  const std::string searches = "!!document.querySelector('table#searches tr[data-search=\"busy-node\"]')";
  const std::string search =
      "!!(document.querySelector('.kv-curve canvas') && document.querySelector('svg.kv-tree circle[data-node]'))";
  const std::string devices = "!!document.querySelector('table#devices td')";
  const std::vector<Tab> tabs{
      {"searches, event stream", "", searches},          {"search page, event stream", "#/search/busy-node", search},
      {"devices, event stream", "#/devices", devices},   {"searches, event stream", "", searches},
      {"search page, event stream", "#/search/busy-node", search}, {"devices, event stream", "#/devices", devices},
      {"searches, polling", "", searches, true},          {"search page, polling", "#/search/busy-node", search, true},
      {"devices, polling", "#/devices", devices, true}};
  std::vector<std::unique_ptr<Cdp>> open;  // every tab stays open while the next ones load
  for (size_t i = 0; i < tabs.size(); ++i) {
    const Tab& tab = tabs[i];
    open.push_back(std::make_unique<Cdp>());
    Cdp& page = *open.back();
    REQUIRE(open_tab(b, page));
    if (tab.polling) {  // as under automation: navigator.webdriver true, and the page polls
      page.call("Page.enable", "{}");
      const std::string made = page.call(
          "Page.addScriptToEvaluateOnNewDocument",
          "{\"source\":\"Object.defineProperty(navigator,'webdriver',{get:function(){return true;}});\"}");
      REQUIRE(made.find("\"identifier\"") != std::string::npos);
    }
    const auto t0 = std::chrono::steady_clock::now();
    page.call("Page.navigate", "{\"url\":" + Cdp::json_string(site + tab.fragment) + "}");
    const bool shown = wait_for([&] { return page.eval(tab.shown) == "true"; }, 30);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "tab " << i + 1 << " (" << tab.name << "): " << (shown ? "shown" : "NOT shown") << " after " << s
              << " s; the page's state: " << page.eval("document.getElementById('live').textContent") << std::endl;
    CHECK(shown);
    CHECK(page.eval("document.getElementById('main').textContent").find("loading") == std::string::npos);
    CHECK(page.eval("navigator.webdriver === true") == (tab.polling ? "true" : "false"));
  }
  // The event-stream tabs keep receiving: the searches tab's evaluated count moves on.
  Cdp& first = *open[0];
  const std::string count = "(function(){var e=document.querySelector('td.evaluated');return e?e.textContent:'';})()";
  const std::string before = first.eval(count);
  CHECK(wait_for([&] { return first.eval(count) != before; }, 30));
  CHECK(first.eval("document.getElementById('live').textContent") == "live");
  stop_chromium(b.pid);

  REQUIRE(http(port, "POST", "/api/search/busy-node/cancel", {bearer()}).status == 200);
  CHECK(wait_exit(n.node, 120) == 0);
  CHECK(wait_exit(n.evaluator, 60) >= 0);
}
