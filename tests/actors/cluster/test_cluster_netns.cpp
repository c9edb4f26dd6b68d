// A real network cut: the node in this network namespace, the evaluator in another, joined by a veth
// pair. Taking the link down drops packets silently (no reset), so only missed heartbeats reveal the
// cut; bringing it up again must heal the cluster without losing or repeating a scored candidate.
// Needs root and iproute2 (`ip netns`); elsewhere the test says why it skips.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "tests/test_support/skip.hpp"
#include "tests/actors/cluster/cluster_test_helpers.hpp"

using namespace kevolve;
using namespace kevolve::cluster_test;

namespace {

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

struct Namespace {
  std::string ns, host_if, ns_if;
  bool ok = false;
  explicit Namespace(int tag) {
    ns = "kvns" + std::to_string(tag);
    host_if = "kvh" + std::to_string(tag);
    ns_if = "kvn" + std::to_string(tag);
    ok = sh("ip netns add " + ns) == 0 && sh("ip link add " + host_if + " type veth peer name " + ns_if) == 0 &&
         sh("ip link set " + ns_if + " netns " + ns) == 0 && sh("ip addr add 10.213.7.1/24 dev " + host_if) == 0 &&
         sh("ip link set " + host_if + " up") == 0 && sh("ip -n " + ns + " addr add 10.213.7.2/24 dev " + ns_if) == 0 &&
         sh("ip -n " + ns + " link set " + ns_if + " up") == 0 && sh("ip -n " + ns + " link set lo up") == 0;
  }
  ~Namespace() {
    sh("ip link del " + host_if);
    sh("ip netns del " + ns);
  }
};

}  // namespace

TEST_CASE("a silent network cut between two namespaces is noticed by heartbeats and heals without loss",
          "[cluster][netns]") {
  if (geteuid() != 0 || sh("command -v ip") != 0) {
    kevolve::test::say_skipped("the network-namespace test needs root and iproute2 (ip netns)");
    return;
  }
  Namespace net(getpid() % 100000);
  if (!net.ok) {
    kevolve::test::say_skipped("cannot create a network namespace with a veth pair here (no CAP_NET_ADMIN?)");
    return;
  }
  TempDir t;
  const int budget = 100;
  const uint16_t port = free_port();
  const std::string address = "10.213.7.1:" + std::to_string(port);
  const std::string config = write_config(t.path, budget, port, "10.213.7.1");
  const std::string node_log = t.path + "/node.log", ev_log = t.path + "/ev.log";
  const pid_t node = spawn({bin("kevolve"), "node", "--config", config, "--out", t.path + "/out"}, node_log);
  REQUIRE(wait_for([&] { return slurp(node_log).find("listening on " + address) != std::string::npos; }, 30));
  const pid_t ev = spawn({"/usr/sbin/ip", "netns", "exec", net.ns, bin("kevolve"), "evaluator", "--join", address,
                          "--backend", "null", "--devices", "2", "--null-delay-ms", "100", "--heartbeat", "0.5"},
                         ev_log);
  REQUIRE(wait_for([&] { return evaluated(t.path, address) >= 20; }, 60));

  // The cut: packets vanish, nothing is reset. The node must notice through missed heartbeats.
  REQUIRE(sh("ip link set " + net.host_if + " down") == 0);
  const auto cut = std::chrono::steady_clock::now();
  REQUIRE(wait_for([&] { return slurp(node_log).find("left (") != std::string::npos; }, 30));
  const double noticed = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  REQUIRE(wait_for([&] { return slurp(ev_log).find("lost the coordinator") != std::string::npos; }, 30));
  std::cerr << "netns cut: the node dropped the evaluator's devices " << noticed << " s after the link went down\n";
  // Five missed heartbeats of 0.5 s end the connection (2.5 s); twelve heartbeats allow for a busy machine.
  CHECK(noticed <= 12 * 0.5);
  const auto before = scored(t.path + "/store");

  REQUIRE(sh("ip link set " + net.host_if + " up") == 0);
  REQUIRE(wait_exit(node, 120) == 0);
  const std::string evlog = slurp(ev_log);
  size_t joins = 0;
  for (size_t p = 0; (p = evlog.find("device(s) joined", p)) != std::string::npos; ++p) ++joins;
  CHECK(joins == 2);
  const auto after = scored(t.path + "/store");
  CHECK(after.size() == static_cast<size_t>(budget));
  for (auto id : before) CHECK(after.count(id) == 1);
  CHECK(slurp(node_log).find("re-queued") != std::string::npos);
  kill(ev, SIGTERM);
  CHECK(wait_exit(ev, 30) == 0);
}
