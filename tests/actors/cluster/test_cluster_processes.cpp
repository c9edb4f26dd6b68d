// The cluster as a user runs it: a `kevolve node`, `kevolve evaluator` processes and `kevolve-console`,
// all real processes talking over loopback. Null-backend evaluators (synthetic results after a delay)
// keep the test fast while exercising the real links, bridges, scheduling and store.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "storage/store.hpp"
#include "tests/actors/cluster/cluster_test_helpers.hpp"

using namespace kevolve;
using namespace kevolve::cluster_test;

TEST_CASE("a node, two evaluators and a console run a search, and killing an evaluator mid-evaluation loses nothing",
          "[cluster]") {
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
  CHECK(bad_out.find("wrong proof of the console key") != std::string::npos);
  CHECK(slurp(node_log).find("refused a connection from 127.0.0.1") != std::string::npos);  // logged with the address
  CHECK(slurp(node_log).find("wrong proof of the console key") != std::string::npos);

  const pid_t e1 = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2",
                          "--null-delay-ms", "150", "--null-ledger", ledger, "--heartbeat", "0.5"},
                         t.path + "/e1.log");
  const pid_t e2 = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "1",
                          "--null-delay-ms", "150", "--null-ledger", ledger, "--heartbeat", "0.5"},
                         t.path + "/e2.log");
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

  // Interactive: commands read line by line until quit (here from a pipe-like file, as a script would).
  std::ofstream(t.path + "/commands") << "devices\n\nstats\nfrobnicate\nquit\nsearches\n";
  const pid_t repl = spawn({bin("kevolve-console"), address}, t.path + "/repl.out", kSecret, t.path + "/commands");
  CHECK(wait_exit(repl, 30) == 0);
  const std::string session = slurp(t.path + "/repl.out");
  CHECK(session.find("null device") != std::string::npos);
  CHECK(session.find("evaluations/s, queue depth") != std::string::npos);
  CHECK(session.find("error: unknown command 'frobnicate' (try `help`)") != std::string::npos);
  CHECK(session.find("cluster-test  gelu") == std::string::npos);  // after quit nothing runs

  // Paused, the search proposes nothing new: once the candidates in flight are scored, the count stays.
  auto [pause_rc, paused] = console(t.path, address, {"pause", "cluster-test"});
  CHECK(pause_rc == 0);
  CHECK(paused.find("search cluster-test paused") != std::string::npos);
  // Ordered by state: wait until nothing of it is in flight, then watch the count stay for a second.
  REQUIRE(wait_for([&] { return in_flight(t.path, address) == 0; }, 30));
  const int64_t held = evaluated(t.path, address);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  CHECK(evaluated(t.path, address) == held);
  CHECK(std::get<1>(console(t.path, address, {"searches"})).find("cluster-test  gelu  paused") != std::string::npos);
  CHECK(std::get<0>(console(t.path, address, {"resume", "cluster-test"})) == 0);
  REQUIRE(wait_for([&] { return evaluated(t.path, address) > held + 5; }, 30));

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
  // Every scored node was really evaluated, and exactly once, except the jobs the node took back from the
  // killed evaluator: those ran at most twice (once on the victim, once again). Counted as a multiset.
  std::map<uint64_t, int> ran;
  std::ifstream in(ledger);
  std::string search;
  for (uint64_t id; in >> search >> id;) ++ran[id];
  std::set<uint64_t> requeued;
  std::smatch m;
  for (auto it = log.cbegin(); std::regex_search(it, log.cend(), m, std::regex("re-queued cluster-test node ([0-9]+)"));
       it = m.suffix().first)
    requeued.insert(std::stoull(m[1]));
  CHECK(!requeued.empty());
  for (auto id : s) {
    INFO("node " << id << " ran " << ran[id] << " times" << (requeued.count(id) ? " (re-queued)" : ""));
    CHECK(ran[id] >= 1);
    CHECK(ran[id] <= (requeued.count(id) ? 2 : 1));
  }
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
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2",
                          "--null-delay-ms", "100", "--heartbeat", "0.5"},
                         t.path + "/ev.log");
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

TEST_CASE("cancel from the console ends the node's search, recorded as finished", "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 100000, port);
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const pid_t ev = spawn(
      {bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "50"},
      t.path + "/ev.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 10; }, 60));
  auto [wrong_rc, wrong] = console(t.path, address, {"cancel", "other-search"});
  CHECK(wrong_rc == 1);
  CHECK(wrong.find("is not running on this node (running: cluster-test)") != std::string::npos);
  auto [rc, out] = console(t.path, address, {"cancel", "cluster-test"});
  CHECK(rc == 0);
  CHECK(out.find("search cluster-test cancelled") != std::string::npos);
  REQUIRE(wait_exit(node, 60) == 0);
  CHECK(slurp(node_log).find("finished: cancelled from the console") != std::string::npos);
  auto st = Store::open(t.path + "/store", true);
  REQUIRE(st);
  auto rec = (*st)->search("cluster-test");
  REQUIRE(rec);
  CHECK(rec->finished);
  CHECK(rec->stop_reason == "cancelled from the console");
  // The evaluator leaves by itself once its node has finished, and says why.
  const int ev_rc = wait_exit(ev, 30);
  INFO(slurp(t.path + "/ev.log"));
  CHECK(ev_rc == 0);
  CHECK(slurp(t.path + "/ev.log").find("the node has finished; leaving") != std::string::npos);
}

TEST_CASE("an evaluator without a node leaves after --wait-for-node seconds and says why", "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();  // nobody listens there
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", "127.0.0.1:" + std::to_string(port), "--backend",
                          "null", "--wait-for-node", "2"},
                         t.path + "/ev.log");
  const int rc = wait_exit(ev, 60);
  const std::string log = slurp(t.path + "/ev.log");
  INFO(log);
  CHECK(rc == 4);
  CHECK(log.find("no coordinator at 127.0.0.1:" + std::to_string(port) + " for 2 s; leaving") != std::string::npos);
}

TEST_CASE("an evaluator whose build target differs from the node's rebuilds each candidate from source", "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = t.path + "/node.toml";
  std::ofstream(config)
      << "[search]\nproblem = \"gelu\"\nid = \"cluster-cpu\"\nbackend = \"cpu\"\noperator = "
         "\"template\"\nmax_in_flight = 1\n"
         "retime_top = 0\n\n[strategy]\nname = \"greedy\"\n\n[budget]\nevaluations = 2\n\n[store]\npath = \""
      << t.path << "/store\"\ncheckpoint_seconds = 0\n\n[eval]\nmin_time = 0.02\n\n[cluster]\nlisten = \"" << address
      << "\"\n";
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  setenv("KEVOLVE_BUILD_TARGET", "cpu:some-other-machine", 1);  // what this evaluator reports about itself
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "cpu"}, t.path + "/ev.log");
  unsetenv("KEVOLVE_BUILD_TARGET");
  // What the evaluator registered: its memory and the copy bandwidth it measured at start.
  std::string devices;
  CHECK(wait_for(
      [&] {
        devices = std::get<1>(console(t.path, address, {"devices", "--json"}));
        return devices.find("\"copy_gbps\":") != std::string::npos;
      },
      60));
  std::smatch m;
  REQUIRE(std::regex_search(devices, m, std::regex("\"memory_bytes\":([0-9]+),\"copy_gbps\":([0-9.e+]+)")));
  CHECK(std::stoll(m[1]) > (int64_t{1} << 28));  // the host's memory (more than 256 MiB)
  CHECK(std::stod(m[2]) > 0.1);                  // GB/s, measured
  REQUIRE(wait_exit(node, 300) == 0);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
  auto st = Store::open(t.path + "/store", true);
  REQUIRE(st);
  const auto nodes = (*st)->nodes("cluster-cpu");
  REQUIRE(nodes.size() == 2);
  for (auto& n : nodes) {
    CHECK(n.correct());
    auto profile = (*st)->artifact("cluster-cpu", n.id, "profile");
    REQUIRE(profile);
    CHECK(profile->find("rebuilt on this evaluator for cpu:some-other-machine (the node built it for cpu:") !=
          std::string::npos);
    // The node's timeline first (build, device), then where it was evaluated.
    CHECK(profile->rfind("timeline: build (queue + compile) ", 0) == 0);
    CHECK(profile->find("\nevaluated on ") != std::string::npos);
  }
}

TEST_CASE("over TLS only peers with a certificate from the node's CA get through", "[cluster][tls]") {
  TempDir t;
  const std::string f = std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/tls/cluster/";
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 60, port);
  std::ofstream(config, std::ios::app) << "tls_cert = \"" << f << "cluster.pem\"\ntls_key = \"" << f
                                       << "cluster.key\"\ntls_ca = \"" << f << "cluster-ca.pem\"\n";
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  auto tls = [&](const std::string& who) {
    return std::vector<std::string>{"--tls-cert",     f + who + ".pem", "--tls-key",
                                    f + who + ".key", "--tls-ca",       f + who + "-ca.pem"};
  };
  auto evaluator = [&](const std::vector<std::string>& extra, const std::string& log) {
    std::vector<std::string> a{bin("kevolve"), "evaluator", "--join", address,           "--backend",
                               "null",         "--devices", "2",      "--null-delay-ms", "20"};
    a.insert(a.end(), extra.begin(), extra.end());
    return spawn(a, log);
  };
  // Without TLS, and with a certificate from another CA, the handshake fails: no device joins.
  const pid_t plain = evaluator({}, t.path + "/plain.log");
  const pid_t stranger = evaluator(tls("stranger"), t.path + "/stranger.log");
  REQUIRE(wait_for(
      [&] {
        return slurp(t.path + "/plain.log").find("cannot reach") != std::string::npos &&
               slurp(t.path + "/stranger.log").find("cannot reach") != std::string::npos;
      },
      30));
  CHECK(slurp(node_log).find("joined") == std::string::npos);
  kill(plain, SIGTERM);
  kill(stranger, SIGTERM);
  CHECK(wait_exit(plain, 30) == 0);
  CHECK(wait_exit(stranger, 30) == 0);

  const pid_t good = evaluator(tls("cluster"), t.path + "/good.log");
  std::vector<std::string> ask{"searches", "--json"};
  const auto c = tls("cluster");
  ask.insert(ask.begin(), c.begin(), c.end());
  std::string last;
  const bool answered = wait_for(
      [&] { return (last = console(t.path, address, ask).second).find("\"evaluated\":") != std::string::npos; }, 60);
  INFO("console: " << last << "\nnode log:\n"
                   << slurp(node_log) << "\nevaluator log:\n"
                   << slurp(t.path + "/good.log"));
  REQUIRE(answered);
  CHECK(console(t.path, address, {"searches"}).first == 2);  // a console without TLS cannot connect
  REQUIRE(wait_exit(node, 120) == 0);
  CHECK(scored(t.path + "/store").size() == 60);
  kill(good, SIGTERM);
  CHECK(wait_exit(good, 30) == 0);
}

TEST_CASE("a node runs the searches its config lists and one submitted from the console, sharing its devices",
          "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 150, port);
  std::ofstream(config, std::ios::app) << "searches = [\"second.toml\"]\n";
  auto search_config = [&](const std::string& file, const std::string& id, const std::string& problem, int budget) {
    std::ofstream(t.path + "/" + file) << "[search]\nproblem = \"" << problem << "\"\nid = \"" << id
                                       << "\"\nbackend = \"null\"\n"
                                       << "operator = \"null\"\nmax_in_flight = 4\n\n[budget]\nevaluations = " << budget
                                       << "\n";
  };
  search_config("second.toml", "second", "rmsnorm_fwd", 80);
  search_config("third.toml", "third", "softmax_rows", 40);
  std::ofstream(t.path + "/other-backend.toml") << "[search]\nproblem = \"gelu\"\nid = \"wrong\"\nbackend = \"cpu\"\n";
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out/first"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  CHECK(slurp(node_log).find("started search second on rmsnorm_fwd (null)") != std::string::npos);
  const pid_t ev = spawn(
      {bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "40"},
      t.path + "/ev.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 10; }, 60));
  auto [rc, out] = console(t.path, address, {"submit", t.path + "/third.toml"});
  CHECK(rc == 0);
  CHECK(out.find("started search third on softmax_rows (null)") != std::string::npos);
  auto [bad_rc, bad] = console(t.path, address, {"submit", t.path + "/other-backend.toml"});
  CHECK(bad_rc == 1);
  CHECK(bad.find("uses the cpu backend; this node's searches use null") != std::string::npos);
  auto [missing_rc, missing] = console(t.path, address, {"submit", t.path + "/nope.toml"});
  CHECK(missing_rc == 1);
  CHECK(missing.rfind("error: " + t.path + "/nope.toml", 0) == 0);
  // A path outside the node's own config folder ([cluster] submit_dirs) is refused before it is opened.
  auto [outside_rc, outside] = console(t.path, address, {"submit", "/etc/shadow"});
  CHECK(outside_rc == 1);
  CHECK(outside.find("is outside the folders this node takes submissions from") != std::string::npos);
  CHECK(outside.find("TOML") == std::string::npos);  // never parsed
  REQUIRE(wait_exit(node, 120) == 0);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
  auto st = Store::open(t.path + "/store", true);
  REQUIRE(st);
  for (auto [id, budget] :
       std::vector<std::pair<std::string, size_t>>{{"cluster-test", 150}, {"second", 80}, {"third", 40}}) {
    auto rec = (*st)->search(id);
    REQUIRE(rec);
    CHECK(rec->finished);
    size_t n = 0;
    for (auto& node : (*st)->nodes(id)) n += node.scored();
    CHECK(n == budget);
  }
  CHECK(fs::exists(t.path + "/out/first/report.json"));
  CHECK(fs::exists(t.path + "/out/second/report.json"));
  CHECK(fs::exists(t.path + "/out/third/report.json"));
}

TEST_CASE("a search submitted from the console is resumed when the node is killed and started again", "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 100000, port);
  std::ofstream(t.path + "/third.toml") << "[search]\nproblem = \"softmax_rows\"\nid = \"third\"\nbackend = \"null\"\n"
                                        << "operator = \"null\"\nmax_in_flight = 4\n\n[budget]\nevaluations = 60\n";
  const std::string node_log = t.path + "/node.log";
  const std::vector<std::string> node_cmd = {bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"};
  pid_t node = spawn(node_cmd, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const pid_t ev = spawn(
      {bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "40"},
      t.path + "/ev.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 5; }, 60));
  auto [rc, out] = console(t.path, address, {"submit", t.path + "/third.toml"});
  REQUIRE(rc == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);

  const std::string node_log2 = t.path + "/node2.log";
  node = spawn(node_cmd, node_log2);
  REQUIRE(wait_for([&] { return slurp(node_log2).find("listening on " + address) != std::string::npos; }, 30));
  CHECK(slurp(node_log2).find("resuming search third, submitted from the console before the restart") !=
        std::string::npos);
  // The node's own search would run for ever: cancel it; the node ends once the resumed search has its budget.
  auto [crc, cout_] = console(t.path, address, {"cancel", "cluster-test"});
  CHECK(crc == 0);
  REQUIRE(wait_exit(node, 120) == 0);
  INFO(slurp(node_log2));
  auto st = Store::open(t.path + "/store", true);
  REQUIRE(st);
  auto rec = (*st)->search("third");
  REQUIRE(rec);
  CHECK(rec->submitted);
  CHECK(rec->finished);
  size_t scored = 0;
  for (auto& n : (*st)->nodes("third")) scored += n.scored();
  CHECK(scored == 60);
  const int ev_rc = wait_exit(ev, 30);
  INFO(slurp(t.path + "/ev.log"));
  CHECK(ev_rc == 0);  // told the node finished, it left by itself
}

TEST_CASE("evaluators of two device classes: fitness is kept per class, and a search pinned to a class runs only there",
          "[cluster]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 60, port);
  std::ofstream(config, std::ios::app) << "searches = [\"pinned.toml\"]\nstay = true\n";
  std::ofstream(t.path + "/pinned.toml")
      << "[search]\nproblem = \"rmsnorm_fwd\"\nid = \"pinned\"\nbackend = \"null\"\noperator = \"null\"\n"
         "max_in_flight = 4\ndevice_class = \"Model B\"\n\n[budget]\nevaluations = 30\n";
  const std::string node_log = t.path + "/node.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  // Two machines of one backend whose devices differ (what each reports about itself).
  setenv("KEVOLVE_DEVICE_MODEL", "Model A", 1);
  const pid_t ea = spawn(
      {bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "20"},
      t.path + "/ea.log");
  setenv("KEVOLVE_DEVICE_MODEL", "Model B", 1);
  const pid_t eb = spawn(
      {bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2", "--null-delay-ms", "20"},
      t.path + "/eb.log");
  unsetenv("KEVOLVE_DEVICE_MODEL");
  auto finished = [&](const std::string& id) {
    return std::get<1>(console(t.path, address, {"show", id, "--json"})).find("\"finished\":true") != std::string::npos;
  };
  REQUIRE(wait_for([&] { return finished("cluster-test") && finished("pinned"); }, 120));
  // The pinned search's first jobs came before any evaluator: the node said what they wait for.
  CHECK(slurp(node_log).find("search pinned waits for a device whose class contains 'Model B'") != std::string::npos);

  auto [dev_rc, devices] = console(t.path, address, {"devices", "--json"});
  CHECK(devices.find("\"device_class\":\"null Model A\"") != std::string::npos);
  CHECK(devices.find("\"device_class\":\"null Model B\"") != std::string::npos);
  // The unpinned search ran on both classes and keeps a best for each; `best --class` picks one.
  auto [show_rc, show] = console(t.path, address, {"show", "cluster-test"});
  CHECK(show_rc == 0);
  CHECK(show.find("per device class (speedups measured on that class):") != std::string::npos);
  CHECK(show.find("  null Model A: evaluated ") != std::string::npos);
  CHECK(show.find("  null Model B: evaluated ") != std::string::npos);
  auto [best_rc, best] = console(t.path, address, {"best", "cluster-test", "--class", "Model A"});
  CHECK(best_rc == 0);
  CHECK(best.find("best on null Model A: node ") != std::string::npos);
  CHECK(best.find("best on null Model B: node ") != std::string::npos);
  CHECK(best.find(", on null Model A)") != std::string::npos);
  auto [none_rc, none] = console(t.path, address, {"best", "cluster-test", "--class", "Model C"});
  CHECK(none_rc == 1);
  CHECK(none.find("no device class of search cluster-test contains 'Model C'") != std::string::npos);
  kill(node, SIGTERM);  // a node that stays ends only by a signal: "interrupted"
  CHECK(wait_exit(node, 60) == 130);
  kill(ea, SIGTERM);
  kill(eb, SIGTERM);
  CHECK(wait_exit(ea, 30) == 0);
  CHECK(wait_exit(eb, 30) == 0);

  auto st = Store::open(t.path + "/store", true);
  REQUIRE(st);
  std::map<std::string, std::set<std::string>> classes;  // search -> the classes its nodes ran on
  for (const char* id : {"cluster-test", "pinned"}) {
    const auto nodes = (*st)->nodes(id);
    CHECK(nodes.size() == (std::string(id) == "pinned" ? 30u : 60u));
    for (auto& n : nodes) {
      CHECK(n.scored());
      classes[id].insert(n.device_class);
    }
  }
  CHECK(classes["cluster-test"] == std::set<std::string>{"null Model A", "null Model B"});
  CHECK(classes["pinned"] == std::set<std::string>{"null Model B"});
  const std::string report = slurp(t.path + "/out/report.json");
  CHECK(std::regex_search(
      report,
      std::regex(
          "\"device_classes\":\\[\\{\"device_class\":\"null Model A\",[^}]*\\},\\{\"device_class\":\"null Model B\"")));
  // A local run cannot honour a class its machine lacks: refused with the reason.
  const std::string local = t.path + "/local.toml";
  std::ofstream(local) << "[search]\nproblem = \"gelu\"\nbackend = \"null\"\noperator = \"null\"\ndevice_class = "
                          "\"Model Z\"\n\n[store]\npath = \""
                       << t.path << "/local-store\"\n";
  const pid_t run = spawn({bin("kevolve"), "run", local}, t.path + "/local.log");
  CHECK(wait_exit(run, 60) != 0);
  CHECK(slurp(t.path + "/local.log").find("[search] device_class = \"Model Z\" matches no device of this machine") !=
        std::string::npos);
}
