// `kevolve run CONFIG [--out DIR]`: runs (or resumes) a search with the actor engine, shows progress,
// and writes the report (report.json, best/, report.html) when it ends.
// `kevolve report --store PATH --search ID --out DIR`: writes the report of a stored search (read-only,
// so it works while the search is running).
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_run_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
