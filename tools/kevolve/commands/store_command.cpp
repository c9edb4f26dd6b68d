#include "tools/kevolve/commands/store_command.hpp"

#include <filesystem>
#include <iostream>

#include "storage/store.hpp"

namespace kevolve::cli {

namespace {

int verify_store(const std::string& path) {
  if (!std::filesystem::is_directory(path)) {
    std::cerr << "kevolve store verify: " << path << ": no such store (a folder made by kevolve run)\n";
    return 2;
  }
  auto store = Store::open(path, /*read_only=*/true);
  if (!store) {
    std::cerr << "kevolve store verify: " << store.error() << "\n";
    return 2;
  }
  const StoreCheck c = (*store)->verify();
  std::cout << path << ": " << c.searches << " searches, " << c.nodes << " nodes, " << c.artifacts << " artifacts\n";
  if (c.clean()) {
    std::cout << "ok: every table checksum matches and every record decodes\n";
    return 0;
  }
  for (auto& p : c.problems) std::cout << "problem: " << p << "\n";
  std::cout << c.problems.size() << " problem(s): do not resume a search from this store before copying it aside\n";
  return 1;
}

}  // namespace

void add_store_command(CLI::App& app, int& exit_code) {
  auto* store = app.add_subcommand("store", "Check a search store");
  store->require_subcommand(1);
  auto* verify = store->add_subcommand(
      "verify", "Read the whole store: table checksums and every record; exit 1 naming each problem found");
  static std::string path;
  verify->add_option("store", path, "The store's folder (the [store] path of a search config)")->required();
  verify->callback([&exit_code] { exit_code = verify_store(path); });
}

}  // namespace kevolve::cli
