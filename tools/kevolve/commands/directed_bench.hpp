// `kevolve bench directed`: does following the context-memory diagnosis reach the best kernel in fewer
// evaluations than blind mutation? Every valid parameter set of each problem's template is first
// evaluated for real (verified and timed against libtorch; results cached in a table file), then greedy
// searches with the blind and the directed template operator are replayed over those measured results
// for several seeds, counting the evaluations each needs to reach 95 % of the best measured speedup.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_directed_bench(CLI::App& bench, int& exit_code);

}  // namespace kevolve::cli
