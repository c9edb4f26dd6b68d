// kevolve-console HOST:PORT [COMMAND ARGS... [--json]]
// The actor console of a running `kevolve node`: proves the shared secret to the node's gatekeeper
// (environment variable KEVOLVE_CLUSTER_SECRET, or the one named by --secret-env VAR), then runs one
// command and exits (exit 1 when the node answers with an error), or, without a command, reads commands
// from the terminal (`help` lists them; `quit` or end of input leaves; Tab completes command names,
// history with the arrow keys, where the terminal allows).
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <sstream>

#include "actors/cluster/console_service.hpp"
#include "actors/cluster/join.hpp"
#include "actors/engine/engine.hpp"
#include "actors/protocol/cluster.hpp"
#include "runtime/core/host_port.hpp"
#include "tools/console/line_editor.hpp"

namespace {

const char* kUsage =
    "usage: kevolve-console HOST:PORT [--secret-env VAR] [--tls-cert PEM --tls-key PEM --tls-ca PEM] [COMMAND ARGS... "
    "[--json]]\n"
    "  without a command: interactive (help lists the commands)\n";

// Sends one command; returns false when the node answered with an error or did not answer.
bool ask(caf::actor_system& sys, const caf::actor& registry, const std::vector<std::string>& words, std::ostream& out) {
  caf::scoped_actor self{sys};
  bool ok = true;
  self->request(registry, std::chrono::seconds(30), kevolve::atoms::console_atom::value, words)
      .receive(
          [&](std::string& text) {
            out << text;
            ok = text.rfind("error:", 0) != 0;
          },
          [&](caf::error& e) {
            std::cerr << "kevolve-console: no answer from the node: " << sys.render(e) << "\n";
            ok = false;
          });
  return ok;
}

// Watches the node's registry: the moment the connection to the node ends (the node was killed, the
// network cut), `lost` is set and the console says so at once, instead of the next command waiting for
// its timeout. Keep the returned handle: CAF ends an actor that nobody references.
caf::actor watch(caf::actor_system& sys, const caf::actor& registry, std::shared_ptr<std::atomic<bool>> lost,
                 const std::string& where) {
  return sys.spawn([registry, lost, where](caf::event_based_actor* self) -> caf::behavior {
    self->monitor(registry);
    self->set_down_handler([self, lost, where](caf::down_msg& dm) {
      lost->store(true);
      std::cerr << "\nkevolve-console: lost the node at " << where << " (" << to_string(dm.reason)
                << "); help still works, other commands reconnect first\n";
      self->quit();
    });
    return {[](const std::string&) {}};
  });
}

std::vector<std::string> split(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> w;
  for (std::string s; is >> s;) w.push_back(s);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  auto addr = kevolve::parse_host_port(args[0]);
  if (!addr) {
    std::cerr << "kevolve-console: " << addr.error() << "\n" << kUsage;
    return 2;
  }
  std::string secret_env = "KEVOLVE_CLUSTER_SECRET";
  std::vector<std::string> words;
  kevolve::TlsFiles tls;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--secret-env" && i + 1 < args.size()) {
      secret_env = args[++i];
      continue;
    }
    if (args[i] == "--tls-cert" && i + 1 < args.size()) {
      tls.cert = args[++i];
      continue;
    }
    if (args[i] == "--tls-key" && i + 1 < args.size()) {
      tls.key = args[++i];
      continue;
    }
    if (args[i] == "--tls-ca" && i + 1 < args.size()) {
      tls.ca = args[++i];
      continue;
    }
    words.push_back(args[i]);
  }
  auto secret = kevolve::cluster::secret_from_env(secret_env);
  if (!secret) {
    std::cerr << "kevolve-console: " << secret.error() << "\n";
    return 2;
  }
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  if (tls.partial()) {
    std::cerr << "kevolve-console: TLS needs --tls-cert, --tls-key and --tls-ca together\n";
    return 2;
  }
  kevolve::configure_network(cfg, 1.0);
  caf::actor_system sys{cfg};
  auto registry = kevolve::cluster::join(sys, addr->first, addr->second, *secret, "console", nullptr, tls);
  if (!registry) {
    std::cerr << "kevolve-console: " << registry.error() << "\n";
    return 2;
  }
  if (!words.empty()) return ask(sys, *registry, words, std::cout) ? 0 : 1;

  kevolve::console::LineEditor editor(kevolve::cluster::console_commands());
  const bool tty = isatty(0);
  if (tty) std::cout << "kevolve-console: connected to " << args[0] << " (help lists the commands, quit leaves)\n";
  auto lost = std::make_shared<std::atomic<bool>>(false);
  caf::actor current = *registry;
  caf::actor watcher = watch(sys, current, lost, args[0]);  // held: an actor nobody references is ended
  for (std::string line; editor.read(tty ? "kevolve> " : "", line);) {
    auto w = split(line);
    if (w.empty()) continue;
    if (w[0] == "quit" || w[0] == "exit") break;
    if (w[0] == "help") {  // answered here: it needs no node
      std::cout << kevolve::cluster::console_command(w, kevolve::cluster::ClusterView{}) << std::flush;
      continue;
    }
    if (lost->load()) {
      auto again = kevolve::cluster::join(sys, addr->first, addr->second, *secret, "console", nullptr, tls);
      if (!again) {
        std::cout << "error: the node at " << args[0] << " is gone (" << again.error() << "); not sent\n" << std::flush;
        continue;
      }
      current = *again;
      lost->store(false);
      watcher = watch(sys, current, lost, args[0]);
      std::cout << "kevolve-console: reconnected to " << args[0] << "\n";
    }
    ask(sys, current, w, std::cout);
    std::cout << std::flush;
  }
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);  // else the actor system waits for it
  return 0;
}
