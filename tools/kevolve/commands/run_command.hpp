// `kevolve run CONFIG [--out DIR]`: runs (or resumes) a search with the actor engine, shows progress,
// and writes the report (report.json, best/, report.html) when it ends.
// `kevolve report --store PATH --search ID --out DIR`: writes the report of a stored search (read-only,
// so it works while the search is running).
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "actors/protocol/run_search.hpp"

namespace kevolve::cli {

// A config file made ready to run: the config (with `store_override` when given), its problem and its
// operator. Errors name the file and the key.
Expected<PreparedSearch> prepare_search(const std::string& config_path, const std::string& store_override);
// The same from a config's text (a stored search's config_text; `origin` names it in errors), and from a
// config already loaded.
Expected<PreparedSearch> prepare_search_text(const std::string& text, const std::string& origin,
                                             const std::string& store_override);
Expected<PreparedSearch> prepare_config(RunConfig c, const std::string& config_path, const std::string& store_override);

// Re-times the best candidates (config's retime_top) and writes report.json, report.html and best/ to `out`;
// prints the summary lines. Returns the exit code.
int write_search_report(const RunConfig& c, const ProblemSpec& spec, const std::string& out);

// What `kevolve run` does, as a function: `cluster` set (by `kevolve node`) runs the search with
// remote evaluators instead of local devices. Returns the exit code.
int run_config(const std::string& config_path, std::string out, const std::string& store_override,
               const ClusterOptions* cluster);

void add_run_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
