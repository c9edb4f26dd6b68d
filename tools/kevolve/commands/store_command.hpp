// `kevolve store verify STORE`: reads a whole store — every table file's checksums, every search, node and
// artifact record — and says what it holds and every problem it found (exit 1), or that it is sound (0).
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_store_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
