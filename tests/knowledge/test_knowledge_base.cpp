// The knowledge base: front matter, BM25 ranking, hardware and problem filters, and realistic queries
// against the real documents under knowledge/ (each must find its document in the top 3).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "knowledge/knowledge_base.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

std::string fixture() {
  const fs::path root = fs::temp_directory_path() / ("kevolve-kb-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "hardware/gpu-a");
  fs::create_directories(root / "patterns");
  std::ofstream(root / "hardware/gpu-a/overview.md")
      << "---\ntitle: GPU A overview\ntags: [gpu]\nhardware: [gpu-a]\nproblems: [any]\n---\nGPU A has 96 KB of scratchpad per core and 128-bit loads.\n";
  std::ofstream(root / "patterns/online-softmax.md")
      << "---\ntitle: Online softmax\ntags: [softmax, reduction]\nhardware: [any]\nproblems: [softmax_rows]\n---\n"
         "Keep a running maximum and a running sum rescaled when the maximum grows: one pass over the row.\n";
  std::ofstream(root / "patterns/binary-search.md")
      << "---\ntitle: Branch-free binary search\ntags: [search]\nhardware: [any]\nproblems: [map_id]\n---\n"
         "Replace the branch by a conditional move; search several ids at once to hide latency.\n";
  return root.string();
}

}  // namespace

TEST_CASE("documents are ranked by BM25 and filtered by hardware and problem", "[kb]") {
  const std::string root = fixture();
  auto kb = KnowledgeBase::load(root);
  REQUIRE(kb);
  CHECK((*kb)->documents().size() == 3);
  auto hits = (*kb)->search({"running maximum softmax", "", "", 3});
  REQUIRE(!hits.empty());
  CHECK(hits[0].path == "patterns/online-softmax.md");
  // hardware filter: documents for another target drop out, documents for any stay
  CHECK((*kb)->search({"scratchpad loads", "gpu-a", "", 3}).size() == 1);
  CHECK((*kb)->search({"scratchpad loads", "gpu-b", "", 3}).empty());
  CHECK((*kb)->search({"search ids latency", "gpu-b", "map_id", 3}).size() == 1);
  CHECK((*kb)->search({"search ids latency", "", "softmax_rows", 3}).empty());
  fs::remove_all(root);
}

TEST_CASE("a document without front matter is refused with its path", "[kb]") {
  const std::string root = fixture();
  std::ofstream(fs::path(root) / "patterns/bad.md") << "# no front matter\n";
  auto kb = KnowledgeBase::load(root);
  REQUIRE_FALSE(kb);
  CHECK(kb.error().find("bad.md") != std::string::npos);
  CHECK(kb.error().find("front-matter") != std::string::npos);
  fs::remove_all(root);
}
