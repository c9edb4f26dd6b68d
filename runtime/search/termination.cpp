#include "runtime/search/termination.hpp"

namespace kevolve {

std::optional<std::string> should_stop(const TerminationConfig& c, const SearchGraph& g, double elapsed_s,
                                       int64_t since_best) {
  if (c.max_evaluations > 0 && static_cast<int64_t>(g.scored()) >= c.max_evaluations)
    return "evaluation budget of " + std::to_string(c.max_evaluations) + " reached";
  if (c.max_seconds > 0 && elapsed_s >= c.max_seconds)
    return "wall-clock budget of " + std::to_string(static_cast<int64_t>(c.max_seconds)) + " s reached";
  if (c.no_improvement > 0 && since_best >= c.no_improvement)
    return "no improvement in the last " + std::to_string(c.no_improvement) + " evaluations";
  if (c.target_speedup > 0)
    if (auto b = g.best(); b && g.find(*b)->fitness >= c.target_speedup)
      return "target speedup " + std::to_string(c.target_speedup) + "x reached";
  return std::nullopt;
}

}  // namespace kevolve
