// The cluster's commands:
//   kevolve node --config FILE [--out DIR]   the coordinator: runs the config's search with devices that
//                                            evaluators bring; listens only for authenticated cluster links
//   kevolve evaluator --join HOST:PORT [--backend cpu|cuda|null] [--devices N]
//                                            an evaluator: its devices join the coordinator's search
//   kevolve evaluator-key HOST               one machine's evaluator key, derived from the cluster's
// The node reads each role's key from the environment (KEVOLVE_EVALUATOR_KEY, KEVOLVE_CONSOLE_KEY); an
// evaluator reads its own (the cluster's evaluator key, or its host's key) from KEVOLVE_EVALUATOR_KEY.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_cluster_commands(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
