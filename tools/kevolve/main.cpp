// kevolve — finds fast, verified compute kernels. This is the command-line entry point.
// Run `kevolve --help` for the subcommands.
#include <CLI/CLI.hpp>
#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "tools/kevolve/commands/bench_command.hpp"
#include "tools/kevolve/commands/eval_command.hpp"
#include "tools/kevolve/commands/export_command.hpp"
#include "tools/kevolve/commands/suite_command.hpp"
#include "tools/kevolve/commands/kb_command.hpp"
#include "tools/kevolve/commands/inspect_command.hpp"
#include "tools/kevolve/commands/cluster_command.hpp"
#include "tools/kevolve/commands/problems_command.hpp"
#include "tools/kevolve/commands/run_command.hpp"
#include "tools/kevolve/commands/store_command.hpp"

#if KEVOLVE_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char** argv) {
  // Two malloc arenas instead of eight per core: the actor threads free what other threads allocated (a
  // search's scored records), and many arenas keep those pages. Measured by `kevolve bench engine`
  // (docs/benchmarks/engine.md). MALLOC_ARENA_MAX set by the user wins.
  // (Without effect where mimalloc replaces malloc: see tools/kevolve/CMakeLists.txt.)
  if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 2);
#if KEVOLVE_MIMALLOC
  // A call into mimalloc keeps it among the executable's libraries where the linker drops unreferenced ones
  // (--as-needed): it replaces malloc for the process only when it is loaded.
  static_cast<void>(mi_version());
#endif
  CLI::App app{"kevolve: evolves fast, provably correct compute kernels, checked against PyTorch references"};
  app.require_subcommand(1);
  int exit_code = 0;
  kevolve::cli::add_eval_command(app, exit_code);
  kevolve::cli::add_problems_command(app, exit_code);
  kevolve::cli::add_run_command(app, exit_code);
  kevolve::cli::add_report_command(app, exit_code);
  kevolve::cli::add_bench_command(app, exit_code);
  kevolve::cli::add_kb_command(app, exit_code);
  kevolve::cli::add_inspect_command(app, exit_code);
  kevolve::cli::add_cluster_commands(app, exit_code);
  kevolve::cli::add_export_command(app, exit_code);
  kevolve::cli::add_suite_command(app, exit_code);
  kevolve::cli::add_store_command(app, exit_code);
  // A first word that is no command: say so, and list the commands (CLI11 would only ask for "a subcommand").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "kevolve: unknown command '" << argv[1] << "' (commands: " << names << "; kevolve --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
