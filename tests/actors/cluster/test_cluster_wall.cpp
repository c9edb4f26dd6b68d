// The cluster's wall, tried as the other users of a shared GPU node and as a compromised evaluator would, with
// real node and evaluator processes on loopback: no listening socket speaks CAF's protocol to anyone (the
// node loads no CAF network layer; evaluators listen nowhere), a role's key opens only that role's messages,
// clients speak only to a node that proves the key back, oversized frames and connection floods cost the node
// little and drop no legitimate peer, and a proof is worthless on any other connection.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "runtime/net/cluster_frames.hpp"
#include "actors/protocol/type_ids.hpp"
#include "runtime/net/cluster_link.hpp"
#include "runtime/net/peer_proof.hpp"
#include "tests/actors/cluster/cluster_test_helpers.hpp"

using namespace kevolve;
using namespace kevolve::cluster_test;

namespace {

constexpr uid_t kNobodyId = 65534;

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

// Starts a node with `budget` evaluations on a free port; waits until it listens.
struct Node {
  TempDir t;
  uint16_t port = free_port();
  std::string address = "127.0.0.1:" + std::to_string(port);
  std::string log = t.path + "/node.log";
  pid_t pid = -1;
  explicit Node(int budget, const std::string& extra_config = "") {
    const std::string config = write_config(t.path, budget, port);
    std::ofstream(config, std::ios::app) << extra_config;
    pid = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, log);
    REQUIRE(wait_for([&] { return slurp(log).find("listening on " + address) != std::string::npos; }, 30));
  }
  ~Node() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      wait_exit(pid, 30);
    }
  }
  pid_t evaluator(int devices, int delay_ms, const std::string& name) {
    return spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--devices",
                  std::to_string(devices), "--null-delay-ms", std::to_string(delay_ms), "--heartbeat", "0.5"},
                 t.path + "/" + name + ".log");
  }
};

// "Key: value" of /proc/<pid>/status in KiB (VmRSS, VmHWM), -1 when absent.
int64_t status_kib(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  return -1;
}

int64_t open_fds(pid_t pid) {
  int64_t n = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) ++n;
  return n;
}

int64_t fd_limit(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("Max open files", 0) == 0) return std::stoll(line.substr(26));
  return -1;
}

// The listening TCP sockets of `pid` (ports), from /proc/net/tcp{,6} matched with its fds' socket inodes.
std::vector<uint16_t> listening_ports(pid_t pid) {
  std::set<std::string> inodes;
  for (auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(e.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<uint16_t> ports;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream is(line);
      std::string sl, local, remote, state, queues, tr, retr, uid, timeout, inode;
      is >> sl >> local >> remote >> state >> queues >> tr >> retr >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode))
        ports.push_back(static_cast<uint16_t>(std::stoul(local.substr(local.find(':') + 1), nullptr, 16)));
    }
  }
  return ports;
}

// Frames and the end of one test link, waited for from the test's thread.
struct Inbox {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::pair<uint8_t, std::string>> frames;
  bool closed = false;
  std::string why;
  net::LinkHandlers handlers() {
    net::LinkHandlers h;
    h.on_frame = [this](uint8_t k, std::string p) {
      std::lock_guard<std::mutex> l(m);
      frames.emplace_back(k, std::move(p));
      cv.notify_all();
    };
    h.on_close = [this](const std::string& w) {
      std::lock_guard<std::mutex> l(m);
      closed = true;
      why = w;
      cv.notify_all();
    };
    return h;
  }
  bool wait(const std::function<bool()>& f, double s) {
    std::unique_lock<std::mutex> l(m);
    return cv.wait_for(l, std::chrono::duration<double>(s), f);
  }
};

// A link in `role`; an evaluator's names `host` and proves `key` as that host's key.
Expected<std::shared_ptr<net::Link>> link_as(const Node& n, net::Role role, const std::string& key, Inbox& in,
                                             net::ConnectError* why = nullptr, const std::string& host = "") {
  net::ConnectOptions o;
  o.host = "127.0.0.1";
  o.port = n.port;
  o.role = role;
  o.key = key;
  o.host_name = host;
  o.limits.heartbeat_s = 0.5;
  return net::connect(o, in.handlers(), why);
}

}  // namespace

TEST_CASE("no listening socket of a node or an evaluator speaks CAF's protocol, tried as another local user",
          "[cluster][wall]") {
  Node n(100000);
  const pid_t ev = n.evaluator(2, 20, "ev");
  REQUIRE(wait_for([&] { return evaluated(n.t.path, n.address) > 0; }, 60));

  // What listens: the node's one cluster port; the evaluator listens nowhere (no tunnel, no CAF port).
  const auto node_ports = listening_ports(n.pid);
  CHECK(node_ports == std::vector<uint16_t>{n.port});
  CHECK(listening_ports(ev).empty());

  // As uid nobody with no key: every listener /proc/net/tcp shows for these processes greets with the
  // cluster handshake and nothing else, and never says more to a peer that sends garbage.
  const pid_t probe = fork();
  if (probe == 0) {
    setgroups(0, nullptr);
    if (setresgid(kNobodyId, kNobodyId, kNobodyId) != 0 || setresuid(kNobodyId, kNobodyId, kNobodyId) != 0) _exit(10);
    for (uint16_t p : node_ports) {
      const int fd = dial(p);
      if (fd < 0) _exit(11);
      if (read_line(fd).rfind("KEVOLVE-CLUSTER 2 ", 0) != 0) _exit(12);
      const std::string basp(64, '\0');
      if (write(fd, basp.data(), basp.size()) != 64) _exit(13);
      char c;
      if (read(fd, &c, 1) > 0) _exit(14);  // nothing answers it: closed, or silent until the deadline
      close(fd);
    }
    _exit(0);
  }
  CHECK(wait_exit(probe, 60) == 0);

  // And a CAF 0.17 client of its own, straight at every listener: no BASP connection, no actor to address.
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  for (uint16_t p : node_ports) {
    auto gate = sys.middleman().remote_actor("127.0.0.1", p);
    CHECK_FALSE(gate);
    if (gate) caf::anon_send_exit(*gate, caf::exit_reason::kill);
  }
  auto [rc, out] = console(n.t.path, n.address, {"devices"});
  CHECK(rc == 0);
  CHECK(out.find("null") != std::string::npos);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("a role's key opens only that role's messages: an evaluator cannot run console commands or pose as "
          "another host",
          "[cluster][wall]") {
  Node n(100000);
  const pid_t ev = n.evaluator(2, 20, "ev");
  REQUIRE(wait_for([&] { return evaluated(n.t.path, n.address) > 0; }, 60));
  char here[256] = {0};
  gethostname(here, sizeof here - 1);
  // What a compromised evaluator machine holds: its own host's key, not the cluster's evaluator key.
  const std::string stolen = net::host_key(evaluator_key(), "another-machine");
  CHECK(stolen != evaluator_key());

  // The evaluator key does not open a console connection, nor the console key an evaluator one; a host's key
  // does not prove another host.
  {
    Inbox a, b, c;
    net::ConnectError why_a, why_b, why_c;
    CHECK_FALSE(link_as(n, net::Role::console, evaluator_key(), a, &why_a));
    CHECK(why_a.refused);
    CHECK_FALSE(link_as(n, net::Role::evaluator, net::host_key(console_key(), here), b, &why_b, here));
    CHECK(why_b.refused);
    CHECK_FALSE(link_as(n, net::Role::evaluator, stolen, c, &why_c, here));
    CHECK(why_c.refused);
    CHECK(why_c.text.find("wrong proof of the evaluator key of host") != std::string::npos);
  }
  // An evaluator's connection asking a console question is closed, unanswered.
  {
    Inbox in;
    auto link = link_as(n, net::Role::evaluator, stolen, in, nullptr, "another-machine");
    REQUIRE(link);
    (*link)->send(cluster::kAsk, cluster::encode(cluster::AskFrame{1, {"best", "cluster-test"}}));
    CHECK(in.wait([&] { return in.closed; }, 10));
    for (auto& [kind, payload] : in.frames) CHECK(kind != cluster::kAnswer);
  }
  // Registering a device under the legitimate evaluator's host (this machine's name) closes the connection.
  {
    Inbox in;
    auto link = link_as(n, net::Role::evaluator, stolen, in, nullptr, "another-machine");
    REQUIRE(link);
    cluster::RegisterFrame r;
    r.info.host = here;
    r.info.pid = 1;
    r.info.backend = "null";
    (*link)->send(cluster::kRegister, cluster::encode(r));
    REQUIRE(in.wait([&] { return in.closed; }, 10));
    for (auto& [kind, payload] : in.frames) CHECK(kind != cluster::kRegistered);
  }
  // A device of its own may join, but a result for a job it was never given closes its connection.
  {
    Inbox in;
    auto link = link_as(n, net::Role::evaluator, stolen, in, nullptr, "another-machine");
    REQUIRE(link);
    cluster::RegisterFrame r;
    r.info.host = "another-machine";
    r.info.pid = 4242;
    r.info.backend = "null";
    (*link)->send(cluster::kRegister, cluster::encode(r));
    // The answer to the registration (a job for the new device may come before it: the node dispatches as
    // the device joins).
    std::string registered;
    REQUIRE(in.wait(
        [&] {
          for (auto& [kind, payload] : in.frames)
            if (kind == cluster::kRegistered) {
              registered = payload;
              return true;
            }
          return false;
        },
        10));
    const auto answer = cluster::decode_registered(registered);
    REQUIRE(answer);
    CHECK(answer->reason.empty());
    EvalResult forged;
    forged.status = EvalStatus::ok;
    forged.speedup = 999;
    (*link)->send(cluster::kResult, cluster::encode(cluster::ResultFrame{0, 987654321, forged}));
    CHECK(in.wait([&] { return in.closed; }, 10));
  }
  // A console connection may not register a device.
  {
    Inbox in;
    auto link = link_as(n, net::Role::console, console_key(), in);
    REQUIRE(link);
    cluster::RegisterFrame r;
    r.info.host = "x";
    r.info.backend = "null";
    (*link)->send(cluster::kRegister, cluster::encode(r));
    CHECK(in.wait([&] { return in.closed; }, 10));
  }
  const std::string log = slurp(n.log);
  INFO(log);
  CHECK(log.find("may not send frame kind") != std::string::npos);
  CHECK(log.find("on a connection that proved host 'another-machine'") != std::string::npos);
  CHECK(log.find("which its device 0 was not given") != std::string::npos);
  auto [rc, out] = console(n.t.path, n.address, {"best", "cluster-test"});
  CHECK(rc == 0);
  CHECK(out.find("999") == std::string::npos);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("clients speak only to a node that proves the key back", "[cluster][wall]") {
  // An impostor: greets like a node, takes any proof and answers OK with a proof it cannot make.
  const int srv = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(srv, reinterpret_cast<sockaddr*>(&a), &len);
  REQUIRE(listen(srv, 16) == 0);
  const uint16_t port = ntohs(a.sin_port);
  std::atomic<int> proofs{0}, after_ok{0};
  std::atomic<bool> stop{false};
  std::thread impostor([&] {
    while (!stop) {
      pollfd p{srv, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const int fd = accept(srv, nullptr, nullptr);
      if (fd < 0) continue;
      timeval tv{2, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      const std::string hello = "KEVOLVE-CLUSTER 2 " + net::make_nonce() + "\n";
      if (write(fd, hello.data(), hello.size()) < 0) {
        close(fd);
        continue;
      }
      if (!read_line(fd).empty()) ++proofs;
      const std::string ok = "OK " + std::string(64, '0') + "\n";
      if (write(fd, ok.data(), ok.size()) > 0) {
        char buf[256];
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) after_ok += static_cast<int>(n);
      }
      close(fd);
    }
  });
  TempDir t;
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto [rc, out] = console(t.path, address, {"searches"});
  CHECK(rc == 2);
  CHECK(out.find("could not prove the console key") != std::string::npos);
  const pid_t ev = spawn({bin("kevolve"), "evaluator", "--join", address, "--backend", "null", "--wait-for-node", "3"},
                         t.path + "/ev.log");
  CHECK(wait_exit(ev, 60) == 4);  // never joined: it left after --wait-for-node
  CHECK(slurp(t.path + "/ev.log").find("could not prove the evaluator key") != std::string::npos);
  stop = true;
  impostor.join();
  close(srv);
  CHECK(proofs >= 2);
  CHECK(after_ok == 0);  // not a frame, not a byte, after the impostor's OK
}

TEST_CASE("oversized frames before and after the proof cost the node little and drop no legitimate peer",
          "[cluster][wall]") {
  signal(SIGPIPE, SIG_IGN);  // the node closes these connections while they are still being written
  Node n(100000);
  const pid_t ev = n.evaluator(2, 20, "ev");
  REQUIRE(wait_for([&] { return evaluated(n.t.path, n.address) > 0; }, 60));
  const int64_t rss_before = status_kib(n.pid, "VmRSS");
  // Before the proof: a CAF/BASP-style header announcing 0xFFFFFFF0 bytes, then a MiB of junk, ten times.
  const std::string junk(1 << 20, 'A');
  for (int i = 0; i < 10; ++i) {
    const int fd = dial(n.port);
    REQUIRE(fd >= 0);
    read_line(fd);
    const std::string header = "\xf0\xff\xff\xff\x01";
    (void)!write(fd, header.data(), header.size());
    (void)!write(fd, junk.data(), junk.size());
    close(fd);
  }
  // After the proof (a console's key): the same announcement as a frame, then 8 MiB of its "payload".
  for (int i = 0; i < 10; ++i) {
    const int fd = dial(n.port);
    REQUIRE(fd >= 0);
    const std::string hello = read_line(fd);
    const std::string nn = hello.substr(std::string("KEVOLVE-CLUSTER 2 ").size()), pn = net::make_nonce();
    say(fd, "console " + pn + " " + net::proof(console_key(), "peer", "console", nn, pn, "") + "\n");
    REQUIRE(read_line(fd).rfind("OK ", 0) == 0);
    const std::string header = "\xf0\xff\xff\xff\x07";
    (void)!write(fd, header.data(), header.size());
    for (int k = 0; k < 8; ++k)
      if (write(fd, junk.data(), junk.size()) < 0) break;
    close(fd);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int64_t rss_after = status_kib(n.pid, "VmRSS");
  INFO("node RSS " << rss_before << " KiB before, " << rss_after << " KiB after");
  CHECK(rss_after - rss_before < 64 * 1024);
  const int64_t at = evaluated(n.t.path, n.address);
  REQUIRE(wait_for([&] { return evaluated(n.t.path, n.address) > at; }, 30));  // still evaluating
  const std::string log = slurp(n.log);
  INFO(log);
  CHECK(log.find(" left (") == std::string::npos);
  CHECK(log.find("re-queued") == std::string::npos);
  CHECK(log.find("a frame of 4294967280 bytes") != std::string::npos);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("20,000 connections from 200 loopback addresses leave the node under its fd limit and its peers working",
          "[cluster][wall]") {
  Node n(1000000);
  const pid_t ev = n.evaluator(2, 20, "ev");
  REQUIRE(wait_for([&] { return evaluated(n.t.path, n.address) > 0; }, 60));
  const int64_t limit = fd_limit(n.pid);
  const size_t log_before = slurp(n.log).size();
  // Two flooders of 10,000 idle connections each (one process has 20,000 descriptors at most here), from
  // 127.0.0.2 .. 127.0.0.201, held open for 10 s.
  std::vector<pid_t> flooders;
  for (int f = 0; f < 2; ++f) {
    const pid_t p = fork();
    if (p == 0) {
      rlimit r{20000, 20000};
      setrlimit(RLIMIT_NOFILE, &r);
      std::vector<int> fds;
      for (int i = 0; i < 10000; ++i) {
        const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fd < 0) break;
        sockaddr_in src{};
        src.sin_family = AF_INET;
        src.sin_addr.s_addr = htonl(0x7f000002u + static_cast<uint32_t>(f * 100 + i % 100));
        bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
        sockaddr_in dst{};
        dst.sin_family = AF_INET;
        dst.sin_port = htons(n.port);
        dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst);
        fds.push_back(fd);
      }
      sleep(10);
      _exit(fds.size() >= 9000 ? 0 : 1);
    }
    flooders.push_back(p);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  int64_t most_fds = 0;
  for (int i = 0; i < 10; ++i) {
    most_fds = std::max(most_fds, open_fds(n.pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // A console answers and the evaluator keeps evaluating while the flood holds.
  const int64_t at = evaluated(n.t.path, n.address);
  CHECK(at > 0);
  CHECK(wait_for([&] { return evaluated(n.t.path, n.address) > at; }, 30));
  for (pid_t p : flooders) CHECK(wait_exit(p, 60) == 0);
  INFO("node fds at most " << most_fds << " of " << limit);
  CHECK(most_fds < limit);
  CHECK(most_fds < 2000);
  const std::string log = slurp(n.log);
  const std::string during = log.substr(log_before);
  CHECK(std::count(during.begin(), during.end(), '\n') < 1000);  // refusals are rate-limited, not one per connection
  CHECK(log.find(" left (") == std::string::npos);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("a proof is bound to its connection: replayed on another one, or for another role, it is refused",
          "[cluster][wall]") {
  Node n(10);
  const std::string greeting = "KEVOLVE-CLUSTER 2 ";
  const int a = dial(n.port), b = dial(n.port);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  const std::string ga = read_line(a), gb = read_line(b);
  REQUIRE(ga.rfind(greeting, 0) == 0);
  REQUIRE(gb.rfind(greeting, 0) == 0);
  const std::string na = ga.substr(greeting.size()), nb = gb.substr(greeting.size());
  CHECK(na != nb);
  const std::string pn = net::make_nonce();
  const std::string proof_a = "console " + pn + " " + net::proof(console_key(), "peer", "console", na, pn, "") + "\n";
  // Connection A's valid proof, sent on connection B: refused.
  say(b, proof_a);
  CHECK(read_line(b).rfind("NO wrong proof", 0) == 0);
  // The same proof on its own connection: accepted, and the node proves the key back for both nonces.
  say(a, proof_a);
  const std::string ok = read_line(a);
  REQUIRE(ok.rfind("OK ", 0) == 0);
  CHECK(net::proof_ok(ok.substr(3), console_key(), "node", "console", na, pn, ""));
  close(a);
  close(b);
  // A proof for one role does not open the door for the other; a control byte in the role is logged escaped.
  const int c = dial(n.port);
  REQUIRE(c >= 0);
  const std::string nc = read_line(c).substr(greeting.size());
  say(c, "evaluator:localhost " + pn + " " + net::proof(console_key(), "peer", "console", nc, pn, "") + "\n");
  CHECK(read_line(c).rfind("NO wrong proof", 0) == 0);
  close(c);
  const int d = dial(n.port);
  REQUIRE(d >= 0);
  read_line(d);
  say(d, "evil\x1b[2Jrole x y\n");
  CHECK(read_line(d).rfind("NO unknown role", 0) == 0);
  close(d);
  CHECK(wait_for([&] { return slurp(n.log).find("evil\\x1b[2Jrole") != std::string::npos; }, 10));
  CHECK(slurp(n.log).find("evil\x1b") == std::string::npos);
}

TEST_CASE("on a TLS node, hostile connections drop no evaluator, and a node with the wrong name is refused",
          "[cluster][wall][tls]") {
  const std::string f = std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/tls/cluster/";
  Node n(300, "tls_cert = \"" + f + "cluster.pem\"\ntls_key = \"" + f + "cluster.key\"\ntls_ca = \"" + f +
                  "cluster-ca.pem\"\n");
  auto tls_evaluator = [&](const std::string& log, const std::vector<std::string>& extra) {
    std::vector<std::string> a{bin("kevolve"), "evaluator", "--join", n.address, "--backend", "null", "--devices", "2",
                               "--null-delay-ms", "40", "--heartbeat", "0.5", "--tls-cert", f + "cluster.pem",
                               "--tls-key", f + "cluster.key", "--tls-ca", f + "cluster-ca.pem"};
    a.insert(a.end(), extra.begin(), extra.end());
    return spawn(a, log);
  };
  // The node's certificate does not carry this name: the evaluator does not join it.
  const std::string wrong_log = n.t.path + "/wrong-name.log";
  const pid_t wrong = tls_evaluator(wrong_log, {"--tls-server-name", "not-the-node.example", "--wait-for-node", "3"});
  CHECK(wait_exit(wrong, 60) == 4);
  CHECK(slurp(wrong_log).find("TLS handshake failed") != std::string::npos);

  const pid_t ev = tls_evaluator(n.t.path + "/ev.log", {});
  REQUIRE(wait_for([&] { return slurp(n.log).find("joined") != std::string::npos; }, 60));
  // 50 hostile connections while the search runs: connect-and-close, 16 garbage bytes, silent for 2 s.
  std::vector<int> silent;
  for (int i = 0; i < 50; ++i) {
    const int fd = dial(n.port);
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
  REQUIRE(wait_exit(n.pid, 180) == 0);
  n.pid = -1;
  const std::string log = slurp(n.log);
  INFO(log);
  CHECK(log.find(" left (") == std::string::npos);    // no device dropped
  CHECK(log.find("re-queued") == std::string::npos);  // no job taken back from a device
  CHECK(log.find("refused a connection from 127.0.0.1") != std::string::npos);
  CHECK(scored(n.t.path + "/store").size() == 300);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}

TEST_CASE("the console notices a lost node, keeps help working, and reconnects when the node is back",
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
  CHECK(noticed < 10);  // at once (the link ends with the connection), not at the next command
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
