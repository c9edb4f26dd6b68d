// `kevolve kb search "QUERY" [--hardware H] [--problem P] [-n N]`: what the knowledge base would give an
// operator for a query — each hit with its path, title, score and first lines.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_kb_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
