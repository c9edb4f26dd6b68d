// `kevolve eval`: evaluate one candidate file against a problem's reference and print the verdict.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

// Registers the subcommand on `app`; the callback runs it and sets `exit_code`.
void add_eval_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
