// `kevolve run CONFIG [--out DIR]`: runs (or resumes) a search with the actor engine, shows progress,
// and writes the report (report.json, best/, report.html) when it ends.
// `kevolve report --store PATH --search ID --out DIR`: writes the report of a stored search (read-only,
// so it works while the search is running).
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace kevolve {
struct ClusterOptions;
}

namespace kevolve::cli {

// What `kevolve run` does, as a function: `cluster` set (by `kevolve node`) runs the search with
// remote evaluators instead of local devices. Returns the exit code.
int run_config(const std::string& config_path, std::string out, const std::string& store_override, const ClusterOptions* cluster);

void add_run_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
