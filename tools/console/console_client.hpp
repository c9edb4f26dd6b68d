// The console's connection to a node: one cluster link in the console role (runtime/net/cluster_link.hpp;
// both sides prove the console key), over which each command goes as an `ask` frame and comes back as its
// `answer` (runtime/net/cluster_frames.hpp). No actor system: the console is a plain client.
#pragma once
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/net/cluster_link.hpp"

namespace kevolve::console {

class ConsoleClient {
 public:
  // Connects and proves the console key; an error (with `refused` set when the node said no) otherwise.
  // `on_lost`, when set, is called (on the link's thread) the moment the connection ends.
  static Expected<std::unique_ptr<ConsoleClient>> open(const net::ConnectOptions& o, net::ConnectError* why = nullptr,
                                                       std::function<void(const std::string&)> on_lost = nullptr);
  ~ConsoleClient();

  // Sends one command and waits up to timeout_s for its answer.
  Expected<std::string> ask(const std::vector<std::string>& words, double timeout_s = 30);
  // Whether the link has ended (the node went away); then `lost_reason()` says why.
  bool lost() const;
  std::string lost_reason() const;

 private:
  ConsoleClient() = default;
  struct Shared {
    mutable std::mutex m;
    std::condition_variable cv;
    std::map<uint64_t, std::string> answers;
    bool closed = false;
    std::string why;
  };
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::shared_ptr<net::Link> link_;
  uint64_t next_ = 1;
};

}  // namespace kevolve::console
