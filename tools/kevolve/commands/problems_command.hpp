// `kevolve problems`: list the problems kevolve can find, with their reference and shapes.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_problems_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
