// `kevolve export SOURCE --format torch-extension|cuda-source|kernelbench [--out DIR]`: the best kernel of a
// search (SOURCE = its config, or its report folder), or a kernel file (with --problem), as a package a
// user drops into a model. See runtime/export/exporter.hpp for what each format holds.
#pragma once
#include <CLI/CLI.hpp>

namespace kevolve::cli {

void add_export_command(CLI::App& app, int& exit_code);

}  // namespace kevolve::cli
