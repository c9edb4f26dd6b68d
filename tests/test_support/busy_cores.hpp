// One spinning child process per core for the life of a BusyCores: the load another test, a build or a
// neighbour puts on a shared machine. A test that uses it runs alone (SERIAL): it would slow every test beside it.
#pragma once
#include <algorithm>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kevolve::test {

struct BusyCores {
  std::vector<pid_t> pids;
  BusyCores() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      const pid_t p = fork();
      if (p == 0)
        for (;;) asm volatile("" ::: "memory");  // spins without being optimised away
      if (p > 0) pids.push_back(p);
    }
  }
  ~BusyCores() {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
  }
  BusyCores(const BusyCores&) = delete;
  BusyCores& operator=(const BusyCores&) = delete;
};

}  // namespace kevolve::test
