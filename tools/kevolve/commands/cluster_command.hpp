// The cluster's two processes:
//   kevolve node --config FILE [--out DIR]   the coordinator: runs the config's search with devices that
//                                            evaluators bring; publishes only a gatekeeper ([cluster] listen)
//   kevolve evaluator --join HOST:PORT [--backend cpu|cuda|null] [--devices N]
//                                            an evaluator: its devices join the coordinator's search
// Both read the shared secret from an environment variable (default KEVOLVE_CLUSTER_SECRET).
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_cluster_commands(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
