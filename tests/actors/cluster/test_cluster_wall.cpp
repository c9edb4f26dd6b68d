// The cluster's wall, tried as an attacker on the same network would, with real node and evaluator
// processes on loopback: a peer without the secret reaches nothing behind the node's front door (not even
// CAF, so no actor can be addressed by id, asked, registered with, cancelled or killed), a proof taken
// from one connection is worthless on another, and hostile connections to a TLS node disturb no
// legitimate evaluator.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actors/cluster/hmac.hpp"
#include "actors/protocol/type_ids.hpp"
#include "tests/actors/cluster/cluster_test_helpers.hpp"

using namespace kevolve;
using namespace kevolve::cluster_test;

namespace {

// A raw TCP connection to 127.0.0.1:port; -1 when it cannot connect.
int dial(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// One line from fd (without the newline), or "" on timeout / close.
std::string read_line(int fd) {
  std::string s;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') s += c;
  return s;
}

void say(int fd, const std::string& s) { CHECK(write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size())); }

}  // namespace

TEST_CASE("a peer without the secret reaches no actor of the node: CAF is behind the front door", "[cluster][wall]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string node_log = t.path + "/node.log";
  const pid_t node =
      spawn({bin("kevolve"), "node", "--config", write_config(t.path, 400, port), "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  // A legitimate evaluator joins first: its handles have crossed the network.
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2",
                          "--null-delay-ms", "20", "--heartbeat", "0.5"},
                         t.path + "/ev.log");
  REQUIRE(wait_for([&] { return evaluated(t.path, address) > 0; }, 60));

  // The attack client: CAF 0.17 of its own, no secret, straight at the node's port.
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto gate = sys.middleman().remote_actor("127.0.0.1", port);
  // No BASP connection at all: the client never learns the node's id, holds no proxy for any actor id
  // (1..64 or other), and has nothing to send a request, a registration, a cancel or an exit message to.
  CHECK_FALSE(gate);
  if (gate) caf::anon_send_exit(*gate, caf::exit_reason::kill);
  CHECK(wait_for([&] { return slurp(node_log).find("refused a connection from 127.0.0.1") != std::string::npos; }, 15));

  // The node still answers a legitimate console, still has its devices, and finishes its budget.
  auto [rc, out] = console(t.path, address, {"devices"});
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("null") != std::string::npos);
  REQUIRE(wait_exit(node, 120) == 0);
  CHECK(scored(t.path + "/store").size() == 400);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("a proof is bound to its connection's nonce: replayed on another connection it is refused",
          "[cluster][wall]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string node_log = t.path + "/node.log";
  const pid_t node =
      spawn({bin("kevolve"), "node", "--config", write_config(t.path, 10, port), "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const std::string greeting = "KEVOLVE-CLUSTER 1 ";

  const int a = dial(port), b = dial(port);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  const std::string ga = read_line(a), gb = read_line(b);
  REQUIRE(ga.rfind(greeting, 0) == 0);
  REQUIRE(gb.rfind(greeting, 0) == 0);
  const std::string na = ga.substr(greeting.size()), nb = gb.substr(greeting.size());
  CHECK(na != nb);
  // Connection A's valid proof, sent on connection B: refused.
  say(b, "console " + cluster::prove(kSecret, na, "console") + "\n");
  const std::string answer_b = read_line(b);
  CHECK(answer_b.rfind("NO wrong proof", 0) == 0);
  // The same proof on its own connection: accepted.
  say(a, "console " + cluster::prove(kSecret, na, "console") + "\n");
  CHECK(read_line(a) == "OK");
  close(a);
  close(b);
  // A proof for one role does not open the door for the other.
  const int c = dial(port);
  REQUIRE(c >= 0);
  const std::string nc = read_line(c).substr(greeting.size());
  say(c, "evaluator " + cluster::prove(kSecret, nc, "console") + "\n");
  CHECK(read_line(c).rfind("NO wrong proof", 0) == 0);
  close(c);
  kill(node, SIGTERM);
  wait_exit(node, 30);
}

TEST_CASE("on a TLS node, 50 hostile connections drop no legitimate evaluator", "[cluster][wall][tls]") {
  TempDir t;
  const std::string f = std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/tls/cluster/";
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 300, port);
  std::ofstream(config, std::ios::app) << "tls_cert = \"" << f << "cluster.pem\"\ntls_key = \"" << f
                                       << "cluster.key\"\ntls_ca = \"" << f << "cluster-ca.pem\"\n";
  const std::string node_log = t.path + "/node.log", ev_log = t.path + "/ev.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices", "2",
                          "--null-delay-ms", "40", "--heartbeat", "0.5", "--tls-cert", f + "cluster.pem", "--tls-key",
                          f + "cluster.key", "--tls-ca", f + "cluster-ca.pem"},
                         ev_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("joined") != std::string::npos; }, 60));

  // 50 hostile connections while the search runs: connect-and-close, 16 garbage bytes, silent for 2 s.
  std::vector<int> silent;
  for (int i = 0; i < 50; ++i) {
    const int fd = dial(port);
    if (fd < 0) continue;
    if (i % 3 == 0)
      close(fd);
    else if (i % 3 == 1) {
      say(fd, "0123456789abcdef");
      close(fd);
    } else
      silent.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int fd : silent) close(fd);

  REQUIRE(wait_exit(node, 180) == 0);
  const std::string log = slurp(node_log);
  INFO(log);
  CHECK(log.find(" left (") == std::string::npos);    // no device dropped
  CHECK(log.find("re-queued") == std::string::npos);  // no job taken back from a device
  CHECK(log.find("refused a connection from 127.0.0.1") != std::string::npos);
  CHECK(scored(t.path + "/store").size() == 300);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("the console notices a lost node at once, keeps help working, and reconnects when the node is back",
          "[cluster][console]") {
  TempDir t;
  const uint16_t port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config = write_config(t.path, 50, port);  // no evaluator: the search waits, the node stays
  const std::string node_log = t.path + "/node.log", con_log = t.path + "/console.log", fifo = t.path + "/in";
  auto listening = [&] {
    const std::string log = slurp(node_log);
    size_t n = 0;
    for (size_t p = 0; (p = log.find("listening on " + address, p)) != std::string::npos; ++p) ++n;
    return n;
  };
  pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return listening() == 1; }, 30));
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const pid_t con = spawn({bin("kevolve-console"), address}, con_log, kSecret, fifo);
  // The console's standard input, one command at a time (close-on-exec: the node started later must not hold
  // it open, or the console would never see its end).
  const int in = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(in >= 0);
  auto send = [&](const std::string& line) { say(in, line + "\n"); };
  auto shows = [&](const std::string& text) { return slurp(con_log).find(text) != std::string::npos; };

  send("searches");
  REQUIRE(wait_for([&] { return shows("cluster-test"); }, 30));
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
  const auto killed = std::chrono::steady_clock::now();
  REQUIRE(wait_for([&] { return shows("lost the node at " + address); }, 30));
  const double noticed = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  INFO(slurp(con_log));
  CHECK(noticed < 10);  // at once, not after the 30 s a request may wait
  send("help");         // needs no node
  REQUIRE(wait_for([&] { return shows("searches [--json]"); }, 10));
  send("searches");  // the node is gone: said, not hung
  REQUIRE(wait_for([&] { return shows("is gone"); }, 30));

  node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return listening() == 2; }, 30));
  send("searches");
  REQUIRE(wait_for([&] { return shows("reconnected to " + address); }, 30));
  REQUIRE(wait_for(
      [&] {
        const std::string log = slurp(con_log);
        return log.find("cluster-test", log.find("reconnected to")) != std::string::npos;
      },
      30));
  close(in);  // end of input: the console leaves
  CHECK(wait_exit(con, 30) == 0);
  kill(node, SIGTERM);
  wait_exit(node, 30);
}
