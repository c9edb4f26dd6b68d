// Helpers of the dashboard tests: a tiny HTTP/1.1 client over a loopback socket, and `kevolve` processes
// started (as the cluster tests start them) with the dashboard's token in their environment.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../cluster/cluster_test_helpers.hpp"

namespace kevolve::dashboard_test {

inline const char* kToken = "dashboard-test-token-0123456789";

struct Reply {
  int status = 0;  // 0: no answer
  std::string head, body;
};

// A TCP connection to 127.0.0.1:port whose reads wait at most 20 s; -1 when it could not be made.
inline int connect_loopback(uint16_t port) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{20, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(s);
    return -1;
  }
  return s;
}

// Sends one request (Connection: close) and reads the answer until the server closes or, when `until`
// is given, until the bytes read contain it. Each read waits at most 20 s.
inline Reply http(uint16_t port, const std::string& method, const std::string& target,
                  const std::vector<std::string>& headers = {}, const std::string& body = "",
                  const std::string& until = "") {
  Reply r;
  const int s = connect_loopback(port);
  if (s < 0) return r;
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (auto& h : headers) req += h + "\r\n";
  if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  send(s, req.data(), req.size(), MSG_NOSIGNAL);
  std::string all;
  char buf[8192];
  for (;;) {
    const ssize_t n = recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
    if (!until.empty() && all.find(until) != std::string::npos) break;
  }
  close(s);
  const size_t end = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(all.substr(9, 3));
  r.head = all.substr(0, end);
  r.body = all.substr(end + 4);
  return r;
}

inline std::string bearer() { return std::string("Authorization: Bearer ") + kToken; }

using cluster_test::bin;
using cluster_test::slurp;
using cluster_test::TempDir;
using cluster_test::wait_exit;
using cluster_test::wait_for;

// Starts `args` (cluster_test::spawn) with the token in KEVOLVE_DASHBOARD_TOKEN.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  setenv("KEVOLVE_DASHBOARD_TOKEN", kToken, 1);
  return cluster_test::spawn(args, log);
}

// The dashboard's port from the process's log ("dashboard on http://HOST:PORT/"), 0 until it is there.
inline uint16_t dashboard_port(const std::string& log) {
  std::smatch m;
  const std::string text = slurp(log);
  if (!std::regex_search(text, m, std::regex("dashboard on https?://[^:]+:([0-9]+)/"))) return 0;
  return static_cast<uint16_t>(std::stoi(m[1]));
}

// The first integer after "KEY": in `json` (-1 when absent).
inline int64_t field(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":(-?[0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

// A `kevolve node` (null backend) serving its dashboard, and an evaluator joined to it.
struct BusyNode {
  pid_t node = -1, evaluator = -1;
  uint16_t dashboard = 0, door = 0;
};

// Starts a node in `dir` running search `id` (gelu, null operator, `max_in_flight`), with its dashboard and
// its cluster door on loopback, then `kevolve evaluator --backend null --devices 2` joined to it with
// `delay_ms` per evaluation. `ok` is false when either port never showed in the node's log.
inline BusyNode start_node_with_evaluator(const std::string& dir, const std::string& id, int max_in_flight,
                                          int delay_ms, bool& ok) {
  BusyNode b;
  const std::string cfg = dir + "/node.toml", log = dir + "/node.log";
  std::ofstream(cfg) << "[search]\nproblem = \"gelu\"\nid = \"" << id
                     << "\"\nbackend = \"null\"\noperator = \"null\"\nmax_in_flight = " << max_in_flight
                     << "\nbuild_workers = 1\n\n[budget]\nevaluations = 100000000\n\n[store]\npath = \"" << dir
                     << "/store\"\ncheckpoint_seconds = 0\n\n[cluster]\nlisten = \"127.0.0.1:0\"\n"
                     << "heartbeat = 0.5\n\n[dashboard]\nlisten = \"127.0.0.1:0\"\n";
  b.node = spawn({bin("kevolve"), "node", "--config", cfg, "--out", dir + "/out"}, log);
  ok = wait_for([&] { return (b.dashboard = dashboard_port(log)) != 0; }, 60) &&
       wait_for(
           [&] {
             std::smatch m;
             const std::string text = slurp(log);
             if (!std::regex_search(text, m, std::regex("listening on 127.0.0.1:([0-9]+)"))) return false;
             b.door = static_cast<uint16_t>(std::stoi(m[1]));
             return true;
           },
           60);
  if (!ok) return b;
  b.evaluator = spawn({bin("kevolve"), "evaluator", "--join", "127.0.0.1:" + std::to_string(b.door), "--backend",
                       "null", "--devices", "2", "--null-delay-ms", std::to_string(delay_ms), "--heartbeat", "0.5"},
                      dir + "/evaluator.log");
  return b;
}

}  // namespace kevolve::dashboard_test
