// When a search stops: evaluation budget, wall-clock budget, no improvement for N evaluations, or a
// target speedup reached. Pure; the search actor asks it after every scored node.
#pragma once
#include <optional>
#include <string>

#include "runtime/search/graph.hpp"

namespace kevolve {

struct TerminationConfig {
  int64_t max_evaluations = 100;  // scored nodes
  double max_seconds = 0;         // 0 = no wall-clock budget
  int64_t no_improvement = 0;     // stop after this many scored nodes without a new best; 0 = off
  double target_speedup = 0;      // 0 = off
};

// Returns why the search should stop, or nullopt. `since_best` = scored nodes since the best appeared.
std::optional<std::string> should_stop(const TerminationConfig& c, const SearchGraph& g, double elapsed_s,
                                       int64_t since_best);

}  // namespace kevolve
