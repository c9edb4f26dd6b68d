// The cluster as a user runs it: a `kevolve node`, `kevolve evaluator` processes and `kevolve-console`,
// all real processes talking over loopback. Null-backend evaluators (synthetic results after a delay)
// keep the test fast while exercising the real protocol, gatekeeper, scheduling and store.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "storage/store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

const char* kSecret = "cluster-test-secret-0123456789";

std::string bin(const std::string& name) { return std::string(KEVOLVE_BIN_DIR) + "/" + name; }

// Starts `args` with stdout and stderr appended to `log`; `secret` goes into KEVOLVE_CLUSTER_SECRET.
pid_t spawn(const std::vector<std::string>& args, const std::string& log, const std::string& secret = kSecret) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("KEVOLVE_CLUSTER_SECRET", secret.c_str(), 1);
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

std::string slurp(const std::string& f) {
  std::ifstream in(f);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits for `pid` up to `seconds`; returns its exit code, or -1 when it did not exit in time (then kills it).
int wait_exit(pid_t pid, double seconds) {
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
std::pair<int, std::string> console(const std::string& dir, const std::string& address, const std::vector<std::string>& words,
                                    const std::string& secret = kSecret) {
  static int n = 0;
  const std::string out = dir + "/console-" + std::to_string(++n) + ".out";
  std::vector<std::string> args{bin("kevolve-console"), address};
  args.insert(args.end(), words.begin(), words.end());
  const int rc = wait_exit(spawn(args, out, secret), 30);
  return {rc, slurp(out)};
}

uint16_t free_port() {
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

std::string write_config(const std::string& dir, int budget, uint16_t port) {
  const std::string path = dir + "/node.toml";
  std::ofstream(path) << "[search]\nproblem = \"gelu\"\nid = \"cluster-test\"\nbackend = \"null\"\noperator = \"null\"\nmax_in_flight = 8\n"
                         "build_workers = 1\n\n[strategy]\nname = \"greedy\"\n\n[budget]\nevaluations = " << budget
                      << "\n\n[store]\npath = \"" << dir << "/store\"\ncheckpoint_seconds = 0\n\n[cluster]\nlisten = \"127.0.0.1:" << port
                      << "\"\nheartbeat = 0.5\n";
  return path;
}

int64_t evaluated(const std::string& dir, const std::string& address) {
  auto [rc, out] = console(dir, address, {"searches", "--json"});
  std::smatch m;
  if (rc != 0 || !std::regex_search(out, m, std::regex("\"evaluated\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

bool wait_for(const std::function<bool()>& f, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

std::set<uint64_t> scored(const std::string& store) {
  std::set<uint64_t> s;
  auto st = Store::open(store, true);
  if (!st) return s;
  for (auto& n : (*st)->nodes("cluster-test"))
    if (n.scored()) s.insert(n.id);
  return s;
}

struct TempDir {
  std::string path = (fs::temp_directory_path() / ("kevolve-cluster-" + std::to_string(getpid()) + "-" + std::to_string(rand()))).string();
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("a node, two evaluators and a console run a search; killing an evaluator mid-evaluation loses nothing", "[cluster]") {
  TempDir t;
  const int budget = 120;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, budget, port);
  const std::string node_log = t.path + "/node.log", ledger = t.path + "/ledger";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));

  // Before any evaluator: the console sees the search waiting, and a wrong secret gets nothing.
  auto [bad_rc, bad_out] = console(t.path, address, {"searches"}, "not-the-secret-at-all");
  CHECK(bad_rc == 2);
  CHECK(bad_out.find("wrong proof of the shared secret") != std::string::npos);
  CHECK(slurp(node_log).find("refused a console peer") != std::string::npos);

  const pid_t e1 = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "150",
                          "--null-ledger", ledger, "--heartbeat", "0.5"}, t.path + "/e1.log");
  const pid_t e2 = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "1", "--null-delay-ms", "150",
                          "--null-ledger", ledger, "--heartbeat", "0.5"}, t.path + "/e2.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 30; }, 60));

  auto [dev_rc, devices] = console(t.path, address, {"devices", "--json"});
  CHECK(dev_rc == 0);
  CHECK(std::regex_search(devices, std::regex("\"alive\":true[^}]*\"busy\":true")));
  size_t alive = 0;
  for (size_t p = 0; (p = devices.find("\"alive\":true", p)) != std::string::npos; ++p) ++alive;
  CHECK(alive == 3);
  auto [show_rc, show] = console(t.path, address, {"show", "cluster-test"});
  CHECK(show_rc == 0);
  CHECK(show.find("search cluster-test on gelu") != std::string::npos);
  auto [unknown_rc, unknown] = console(t.path, address, {"show", "no-such-search"});
  CHECK(unknown_rc == 1);
  CHECK(unknown.find("no search 'no-such-search'") != std::string::npos);

  // Both of its devices are busy (the queue never empties): kill -9 takes two evaluations with it.
  kill(e1, SIGKILL);
  waitpid(e1, nullptr, 0);
  REQUIRE(wait_exit(node, 120) == 0);
  kill(e2, SIGTERM);
  INFO(slurp(t.path + "/e2.log"));
  CHECK(wait_exit(e2, 30) == 0);

  const std::string log = slurp(node_log);
  CHECK(log.find("re-queued cluster-test node") != std::string::npos);
  CHECK(log.find("left (") != std::string::npos);
  // Every node of the budget is scored exactly once in the graph; the store has no node twice by
  // construction, so compare the set with the budget.
  const auto s = scored(t.path + "/store");
  CHECK(s.size() == static_cast<size_t>(budget));
  CHECK(*s.rbegin() == static_cast<uint64_t>(budget));
  // Every scored node was really evaluated by a surviving device or before the kill.
  std::set<uint64_t> ran;
  std::ifstream in(ledger);
  std::string search;
  for (uint64_t id; in >> search >> id;) ran.insert(id);
  for (auto id : s) CHECK(ran.count(id) == 1);
}

TEST_CASE("the node killed with kill -9 resumes from its store and the evaluator reconnects by itself", "[cluster]") {
  TempDir t;
  const int budget = 100;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, budget, port);
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "100",
                          "--heartbeat", "0.5"}, t.path + "/ev.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 25; }, 60));
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
  const auto before = scored(t.path + "/store");
  CHECK(before.size() >= 20);

  const pid_t again = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_exit(again, 120) == 0);
  const std::string evlog = slurp(t.path + "/ev.log");
  CHECK(evlog.find("lost the coordinator") != std::string::npos);
  size_t joins = 0;
  for (size_t p = 0; (p = evlog.find("device(s) joined", p)) != std::string::npos; ++p) ++joins;
  CHECK(joins == 2);
  const auto after = scored(t.path + "/store");
  CHECK(after.size() == static_cast<size_t>(budget));
  for (auto id : before) CHECK(after.count(id) == 1);  // nothing scored before the kill was lost
  kill(ev, SIGTERM);
  INFO(evlog);
  CHECK(wait_exit(ev, 30) == 0);
}
