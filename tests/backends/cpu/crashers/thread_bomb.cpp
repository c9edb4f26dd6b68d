// Crasher (thread bomb): starts 5,000 threads that each sleep for 30 s. The runner must end with a clear
// runtime error (its thread or address-space limit refuses them; std::thread then aborts), not hang
// until a timeout, and the machine must not feel it.
#include "kevolve_kernel.h"
#include <chrono>
#include <thread>
#include <vector>

extern "C" int kevolve_kernel(const kv_args* a) {
  std::vector<std::thread> t;
  for (int i = 0; i < 5000; ++i) t.emplace_back([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });
  for (auto& x : t) x.join();
  (void)a;
  return 0;
}
