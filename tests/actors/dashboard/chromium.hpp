// Headless Chromium for the dashboard's browser tests: found on the PATH (or $KEVOLVE_CHROMIUM), started
// with its output in files, and driven interactively over the DevTools protocol (cdp_client.hpp).
#pragma once
#include <sys/types.h>
#include <csignal>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/actors/dashboard/cdp_client.hpp"
#include "tests/actors/dashboard/dashboard_test_helpers.hpp"
#include "tests/test_support/skip.hpp"

namespace kevolve::dashboard_test {

// $KEVOLVE_CHROMIUM, else `chromium` or `chromium-browser` on the PATH; "" when there is none.
inline std::string find_chromium() {
  if (const char* e = std::getenv("KEVOLVE_CHROMIUM"); e && *e) return access(e, X_OK) == 0 ? e : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::string p = d + "/" + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  return "";
}

// find_chromium(), or "" after saying the test is skipped and why (no chromium on this machine).
inline std::string chromium_or_skip() {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    kevolve::test::say_skipped(
        "no chromium ($KEVOLVE_CHROMIUM, or chromium / chromium-browser on the PATH; Debian: apt-get install "
        "--no-install-recommends chromium)");
  return chromium;
}

inline std::string artefact_dir() {
  const std::filesystem::path dir = std::filesystem::path(KEVOLVE_BIN_DIR).parent_path() / "test-artifacts" / "dashboard-browser";
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Starts Chromium with `flags` (headless; --no-sandbox as root, which it refuses otherwise) on `url`, its
// stdout and stderr into the files named, in a process group of its own (stop_chromium ends all of it).
inline pid_t start_chromium(const std::string& chromium, const std::vector<std::string>& flags, const std::string& url,
                     const std::string& out, const std::string& err) {
  std::vector<std::string> args{
      chromium,         "--headless",        "--disable-gpu",          "--disable-dev-shm-usage",
      "--no-first-run", "--hide-scrollbars", "--window-size=1400,1000"};
  if (geteuid() == 0) args.push_back("--no-sandbox");
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(url);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen(out.c_str(), "w", stdout);
    freopen(err.c_str(), "w", stderr);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Ends a Chromium started by start_chromium with every process it started (renderers, GPU, zygotes).
inline void stop_chromium(pid_t pid) {
  if (pid <= 0) return;
  kill(-pid, SIGKILL);
  wait_exit(pid, 30);
}

// An interactive headless Chromium on `url`, driven over the DevTools protocol (cdp_client.hpp). Its pid,
// its DevTools port and a connection to its first page; the caller stops it (stop_chromium).
struct Browser {
  pid_t pid = -1;
  uint16_t devtools = 0;
  Cdp page;
};

// `flags` are added to Chromium's own (e.g. --disable-blink-features=AutomationControlled: pages then see
// navigator.webdriver false, as in a user's browser).
inline bool open_browser(const std::string& chromium, const std::string& dir, const std::string& url, Browser& b,
                         const std::vector<std::string>& flags = {}) {
  const std::string err = dir + "/chromium-cdp.log";
  std::vector<std::string> all{"--user-data-dir=" + dir + "/chromium-cdp-profile", "--remote-debugging-port=0"};
  all.insert(all.end(), flags.begin(), flags.end());
  b.pid = start_chromium(chromium, all, url, "/dev/null", err);
  std::smatch m;
  uint16_t port = 0;
  if (!wait_for(
          [&] {
            const std::string log = slurp(err);
            if (!std::regex_search(log, m, std::regex("DevTools listening on ws://127\\.0\\.0\\.1:([0-9]+)/")))
              return false;
            port = static_cast<uint16_t>(std::stoi(m[1]));
            return true;
          },
          60))
    return false;
  std::string page;
  if (!wait_for(
          [&] {
            auto list = http(port, "GET", "/json/list", {}, "", "} ]");  // it keeps the connection open
            if (!std::regex_search(
                    list.body, m,
                    std::regex("\"webSocketDebuggerUrl\": *\"ws://127\\.0\\.0\\.1(:[0-9]+)?(/devtools/page/[^\"]+)\"")))
              return false;
            page = m[2];
            return true;
          },
          30))
    return false;
  b.devtools = port;
  return b.page.connect_to(port, page);
}

// Opens a new tab on about:blank in `b` (DevTools' PUT /json/new) and connects `tab` to it.
inline bool open_tab(Browser& b, Cdp& tab) {
  auto made = http(b.devtools, "PUT", "/json/new?about:blank", {}, "", "\n}");
  std::smatch m;
  if (!std::regex_search(made.body, m,
                         std::regex("\"webSocketDebuggerUrl\": *\"ws://127\\.0\\.0\\.1(:[0-9]+)?(/devtools/page/[^\"]+)\"")))
    return false;
  return tab.connect_to(b.devtools, m[2]);
}

// Scrolls the first element matching `selector` into view and clicks its centre as a user would (the
// browser hit-tests the point). False when there is no such element.
inline bool click_on(Cdp& page, const std::string& selector) {
  const std::string at =
      page.eval("(function(){var e=document.querySelector(" + Cdp::json_string(selector) +
                ");if(!e)return '';e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();"
                "return (r.left+r.width/2)+' '+(r.top+r.height/2);})()");
  std::istringstream is(at);
  double x = 0, y = 0;
  return (is >> x >> y) && page.click(x, y);
}
}  // namespace kevolve::dashboard_test
