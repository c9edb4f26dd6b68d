// Helpers of the cluster tests: start real kevolve processes, ask the console, wait for conditions.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "storage/store.hpp"

namespace kevolve::cluster_test {

namespace fs = std::filesystem;

inline const char* kSecret = "cluster-test-secret-0123456789";

inline std::string bin(const std::string& name) { return std::string(KEVOLVE_BIN_DIR) + "/" + name; }

// Each role's key as the tests derive it from one test secret (the node holds both; an evaluator or a
// console is started with both too, and uses its own role's).
inline std::string evaluator_key(const std::string& secret = kSecret) { return secret + "-evaluator"; }
inline std::string console_key(const std::string& secret = kSecret) { return secret + "-console"; }

// Starts `args` with stdout and stderr appended to `log`; the role keys derived from `secret` go into
// KEVOLVE_EVALUATOR_KEY and KEVOLVE_CONSOLE_KEY. `input`, when given, becomes its standard input.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& log, const std::string& secret = kSecret,
                   const std::string& input = "") {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("KEVOLVE_EVALUATOR_KEY", evaluator_key(secret).c_str(), 1);
    setenv("KEVOLVE_CONSOLE_KEY", console_key(secret).c_str(), 1);
    if (!input.empty()) freopen(input.c_str(), "r", stdin);
    freopen(log.c_str(), "a", stderr);
    freopen(log.c_str(), "a", stdout);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

inline std::string slurp(const std::string& f) {
  std::ifstream in(f);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits for `pid` up to `seconds`; returns its exit code, or -1 when it did not exit in time (then kills it).
inline int wait_exit(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int st = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

// Runs the console once; returns (exit code, stdout).
inline std::pair<int, std::string> console(const std::string& dir, const std::string& address,
                                           const std::vector<std::string>& words, const std::string& secret = kSecret) {
  static int n = 0;
  const std::string out = dir + "/console-" + std::to_string(++n) + ".out";
  std::vector<std::string> args{bin("kevolve-console"), address};
  args.insert(args.end(), words.begin(), words.end());
  const int rc = wait_exit(spawn(args, out, secret), 30);
  return {rc, slurp(out)};
}

inline uint16_t free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

inline std::string write_config(const std::string& dir, int budget, uint16_t port,
                                const std::string& host = "127.0.0.1") {
  const std::string path = dir + "/node.toml";
  std::ofstream(path) << "[search]\nproblem = \"gelu\"\nid = \"cluster-test\"\nbackend = \"null\"\noperator = "
                         "\"null\"\nmax_in_flight = 8\n"
                         "build_workers = 1\n\n[strategy]\nname = \"greedy\"\n\n[budget]\nevaluations = "
                      << budget << "\n\n[store]\npath = \"" << dir
                      << "/store\"\ncheckpoint_seconds = 0\n\n[cluster]\nlisten = \"" << host << ":" << port
                      << "\"\nheartbeat = 0.5\n"
                      << (host.rfind("127.", 0) == 0 ? "" : "allow_plain_tcp = true  # a test network of our own\n");
  return path;
}

inline int64_t evaluated(const std::string& dir, const std::string& address) {
  auto [rc, out] = console(dir, address, {"searches", "--json"});
  std::smatch m;
  if (rc != 0 || !std::regex_search(out, m, std::regex("\"evaluated\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

// Candidates of the node's first search created but not scored yet (-1 when the console did not answer).
inline int64_t in_flight(const std::string& dir, const std::string& address) {
  auto [rc, out] = console(dir, address, {"searches", "--json"});
  std::smatch m;
  if (rc != 0 || !std::regex_search(out, m, std::regex("\"in_flight\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

inline bool wait_for(const std::function<bool()>& f, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

inline std::set<uint64_t> scored(const std::string& store) {
  std::set<uint64_t> s;
  auto st = Store::open(store, true);
  if (!st) return s;
  for (auto& n : (*st)->nodes("cluster-test"))
    if (n.scored()) s.insert(n.id);
  return s;
}

struct TempDir {
  std::string path =
      (fs::temp_directory_path() / ("kevolve-cluster-" + std::to_string(getpid()) + "-" + std::to_string(rand())))
          .string();
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace kevolve::cluster_test
