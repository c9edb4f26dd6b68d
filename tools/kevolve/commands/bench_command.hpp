// `kevolve bench engine`: pushes candidates through the whole actor pipeline (operator, store, compile
// farm, device registry, node actors) with the null backend, and prints candidates/s, peak candidates in
// flight, memory per candidate in flight, and the time to resume (reopen and rebuild) the finished search.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
