// `kevolve inspect CONFIG NODE [--artifact NAME]`: one node of a stored search — its record, and its
// artifacts (source, prompt, reply, report, compile_log, runner_log). Reads the store read-only.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_inspect_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
