// Where a search stands: pushed by its search actor, shown by the console, the dashboard and the report.
#pragma once
#include <cstdint>
#include <string>

namespace kevolve {

// search -> whoever asks: where the search stands.
struct SearchStatus {
  std::string search;
  int64_t evaluated = 0, in_flight = 0, correct = 0, failed = 0;
  uint64_t best_node = 0;
  double best_fitness = 0;
  double rate = 0;  // evaluations per second since start
  bool finished = false;
  std::string stop_reason;
  std::string save_error;  // finished, but the store failed to save part of the search (why)
  bool paused = false;     // paused from the console: nothing new is proposed
};

}  // namespace kevolve
