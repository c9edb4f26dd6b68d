#include "tools/kevolve/commands/store_command.hpp"

#include <filesystem>
#include <iostream>

#include "storage/store.hpp"

namespace kevolve::cli {

namespace {

// Prints what verify() finds; 0 when clean, 1 when problems were found, 2 when the store cannot be opened.
int report_check(const char* command, const std::string& path) {
  if (!std::filesystem::is_directory(path)) {
    std::cerr << "kevolve store " << command << ": " << path << ": no such store (a folder made by kevolve run)\n";
    return 2;
  }
  auto store = Store::open(path, /*read_only=*/true);
  if (!store) {
    std::cerr << "kevolve store " << command << ": " << store.error() << "\n";
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

int verify_store(const std::string& path) { return report_check("verify", path); }

int repair_store(const std::string& path) {
  if (!std::filesystem::is_directory(path)) {
    std::cerr << "kevolve store repair: " << path << ": no such store (a folder made by kevolve run)\n";
    return 2;
  }
  int64_t nodes_before = -1;
  if (auto before = Store::open(path, /*read_only=*/true)) nodes_before = (*before)->verify().nodes;
  RepairReport rr;
  if (Status st = kevolve::repair_store(path, &rr); !st.ok()) {
    std::cerr << "kevolve store repair: " << st.message << "\n";
    return 2;
  }
  std::cout << "repaired " << path << " in place: " << rr.salvaged << " records salvaged before RocksDB's repair"
            << (rr.damaged_regions ? " (past " + std::to_string(rr.damaged_regions) + " damaged region(s))" : "")
            << " and written back\n";
  for (auto& n : rr.notes) std::cout << "note: " << n << "\n";
  if (rr.confirmed > 0 && rr.readable_sequence < 0)
    std::cout << "lost: unknown: writes up to sequence " << rr.confirmed
              << " were confirmed, and the store could not be read before the repair\n";
  else if (rr.confirmed > static_cast<uint64_t>(rr.readable_sequence))
    std::cout << "lost: " << (rr.confirmed - static_cast<uint64_t>(rr.readable_sequence))
              << " confirmed record writes (searches, nodes, artifacts; sequences " << rr.readable_sequence + 1
              << " to " << rr.confirmed << ") are not in the store\n";
  const int rc = report_check("repair", path);
  if (auto after = Store::open(path, /*read_only=*/true)) {
    const int64_t nodes_after = (*after)->verify().nodes;
    if (nodes_before >= 0 && nodes_after < nodes_before)
      std::cout << (nodes_before - nodes_after) << " node record(s) lost (" << nodes_before << " readable before, "
                << nodes_after << " now)\n";
    else
      std::cout << nodes_after << " node record(s) readable now ("
                << (nodes_before < 0 ? std::string("the store could not be opened before the repair")
                                     : std::to_string(nodes_before) + " before the repair")
                << ")\n";
    // Node ids below a search's next node without a record: lost, whatever could be read before.
    for (auto& s : (*after)->searches()) {
      const auto nodes = (*after)->nodes(s.id);
      const int64_t expected = static_cast<int64_t>(s.next_node) - 1, missing = expected - int64_t(nodes.size());
      if (missing > 0)
        std::cout << "search " << s.id << ": " << missing << " of its " << expected
                  << " node ids have no record (lost)\n";
      // Every node is stored with its source: a node without one lost it (its score, if any, stays).
      std::vector<uint64_t> sourceless;
      for (auto& n : nodes)
        if (!(*after)->artifact(s.id, n.id, "source")) sourceless.push_back(n.id);
      if (!sourceless.empty()) {
        std::cout << "search " << s.id << ": " << sourceless.size() << " of its " << nodes.size()
                  << " node records lost their source (other artifacts of theirs may be lost too): nodes";
        for (size_t i = 0; i < sourceless.size() && i < 20; ++i) std::cout << (i ? ", " : " ") << sourceless[i];
        std::cout << (sourceless.size() > 20 ? ", ..." : "")
                  << "; a resume marks the unscored ones harness_error [source_lost]\n";
      }
    }
  }
  std::cout << "a search resumed from this store evaluates again the candidates whose records were lost\n";
  return rc;
}

}  // namespace

void add_store_command(CLI::App& app, int& exit_code) {
  auto* store = app.add_subcommand("store", "Check or repair a search store");
  store->require_subcommand(1);
  auto* verify = store->add_subcommand(
      "verify", "Read the whole store: table checksums and every record; exit 1 naming each problem found");
  static std::string path;
  verify->add_option("store", path, "The store's folder (the [store] path of a search config)")->required();
  verify->callback([&exit_code] { exit_code = verify_store(path); });
  auto* repair =
      store->add_subcommand("repair",
                            "Repair a damaged store in place (RocksDB's repair: what can be read is kept), then "
                            "verify it and say how many node records were lost; copy the folder aside first");
  repair->add_option("store", path, "The store's folder")->required();
  repair->callback([&exit_code] { exit_code = repair_store(path); });
}

}  // namespace kevolve::cli
