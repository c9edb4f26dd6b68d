// kevolve-console HOST:PORT [COMMAND ARGS... [--json]]
// The console of a running `kevolve node`: connects as a console (proving the console key from the
// environment variable KEVOLVE_CONSOLE_KEY, or the one named by --key-env VAR, and checking that the node
// proves it back), then runs one command and exits (exit 1 when the node answers with an error), or, without
// a command, reads commands from the terminal (`help` lists them; `quit` or end of input leaves; Tab
// completes command names, history with the arrow keys, where the terminal allows).
#include <unistd.h>

#include <iostream>
#include <functional>
#include <memory>
#include <sstream>

#include "runtime/views/console_service.hpp"
#include "runtime/core/host_port.hpp"
#include "runtime/net/peer_proof.hpp"
#include "tools/console/console_client.hpp"
#include "tools/console/line_editor.hpp"

namespace {

const char* kUsage =
    "usage: kevolve-console HOST:PORT [--key-env VAR] [--tls-cert PEM --tls-key PEM --tls-ca PEM [--tls-server-name "
    "NAME]] [COMMAND ARGS... [--json]]\n"
    "  without a command: interactive (help lists the commands)\n"
    "  the console key comes from $KEVOLVE_CONSOLE_KEY (or --key-env VAR)\n";

// Sends one command; returns false when the node answered with an error or did not answer.
bool ask(kevolve::console::ConsoleClient& c, const std::vector<std::string>& words, std::ostream& out) {
  auto text = c.ask(words);
  if (!text) {
    std::cerr << "kevolve-console: no answer from the node: " << text.error() << "\n";
    return false;
  }
  out << *text;
  return text->rfind("error:", 0) != 0;
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
  std::string key_env = "KEVOLVE_CONSOLE_KEY";
  std::vector<std::string> words;
  kevolve::net::ConnectOptions co;
  co.host = addr->first;
  co.port = addr->second;
  co.role = kevolve::net::Role::console;
  for (size_t i = 1; i < args.size(); ++i) {
    auto value = [&](std::string& to) {
      if (i + 1 >= args.size()) return false;
      to = args[++i];
      return true;
    };
    if ((args[i] == "--key-env" && value(key_env)) || (args[i] == "--tls-cert" && value(co.tls.cert)) ||
        (args[i] == "--tls-key" && value(co.tls.key)) || (args[i] == "--tls-ca" && value(co.tls.ca)) ||
        (args[i] == "--tls-server-name" && value(co.tls.server_name)))
      continue;
    words.push_back(args[i]);
  }
  const auto key = kevolve::net::key_from_env(key_env);
  if (!key.error.empty()) {
    std::cerr << "kevolve-console: the console key: " << key.error << " (--key-env)\n";
    return 2;
  }
  co.key = key.key;
  if (co.tls.partial()) {
    std::cerr << "kevolve-console: TLS needs --tls-cert, --tls-key and --tls-ca together\n";
    return 2;
  }
  const bool tty = isatty(0);
  // Interactive: a lost node is said at once, not at the next command.
  std::function<void(const std::string&)> say_lost = [where = args[0]](const std::string& why) {
    std::cerr << "\nkevolve-console: lost the node at " << where << " (" << why
              << "); help still works, other commands reconnect first\n";
  };
  auto client = kevolve::console::ConsoleClient::open(co, nullptr, words.empty() ? say_lost : std::function<void(const std::string&)>());
  if (!client) {
    std::cerr << "kevolve-console: " << client.error() << "\n";
    return 2;
  }
  if (!words.empty()) return ask(**client, words, std::cout) ? 0 : 1;

  kevolve::console::LineEditor editor(kevolve::cluster::console_commands());
  if (tty) std::cout << "kevolve-console: connected to " << args[0] << " (help lists the commands, quit leaves)\n";
  std::unique_ptr<kevolve::console::ConsoleClient> current = std::move(*client);
  for (std::string line; editor.read(tty ? "kevolve> " : "", line);) {
    auto w = split(line);
    if (w.empty()) continue;
    if (w[0] == "quit" || w[0] == "exit") break;
    if (w[0] == "help") {  // answered here: it needs no node
      std::cout << kevolve::cluster::console_command(w, kevolve::cluster::ClusterView{}) << std::flush;
      continue;
    }
    if (current->lost()) {
      auto again = kevolve::console::ConsoleClient::open(co, nullptr, say_lost);
      if (!again) {
        std::cout << "error: the node at " << args[0] << " is gone (" << again.error() << "); not sent\n" << std::flush;
        continue;
      }
      current = std::move(*again);
      std::cout << "kevolve-console: reconnected to " << args[0] << "\n";
    }
    ask(*current, w, std::cout);
    std::cout << std::flush;
  }
  return 0;
}
