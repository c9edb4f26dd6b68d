// `kevolve suite DIR [--backend cpu|cuda] [--candidates DIR] [--out FILE]`: every KernelBench-format
// problem of a folder through the Python interpreter — the reference itself as the correct baseline, and
// each candidate file `<problem-stem>__*.py` of the candidates folder — and a table: per problem and
// candidate its status and speedups over eager and torch.compile; overall, for generated kernels and for
// framework-level rewrites apart, the correct count, fast_1 (correct and faster than eager) and the
// geometric-mean speedup.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_suite_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
