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
      << "---\ntitle: GPU A overview\ntags: [gpu]\nhardware: [gpu-a]\nproblems: [any]\n---\nGPU A has 96 KB of "
         "scratchpad per core and 128-bit loads.\n";
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

TEST_CASE("realistic operator queries find their document in the top 3 of the real knowledge base", "[kb]") {
  auto kb = KnowledgeBase::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(kb);
  struct Case {
    const char* query;
    const char* hardware;
    const char* problem;
    const char* expected;
  };
  const Case cases[] = {
      {"rmsnorm memory-bound vectorized loads avx2", "x86-avx2", "rmsnorm_fwd", "patterns/vectorized-memory-access.md"},
      {"layernorm variance cancellation welford two-pass", "", "layernorm_fwd", "patterns/fused-normalization.md"},
      {"rmsnorm backward dweight per-thread partial sums", "", "rmsnorm_bwd", "patterns/normalization-backward.md"},
      {"softmax running max rescale sum one pass", "", "softmax_rows", "patterns/online-softmax.md"},
      {"exact gelu erf polynomial tolerance tanh approximation", "", "gelu",
       "patterns/transcendental-approximations.md"},
      {"map_id branchless binary search radix directory", "", "map_id", "patterns/id-mapping-search.md"},
      {"bucketize per feature boundaries linear count branch-free", "", "merge_bucketized_dense",
       "patterns/bucketize-per-feature.md"},
      {"batch_event_truncate prefix sum offsets parallel copy", "", "batch_event_truncate",
       "patterns/jagged-segment-operations.md"},
      {"fm interaction sum square precision double accumulation", "", "fm_interaction", "patterns/fm-interaction.md"},
      {"warp shuffle block reduction shared memory", "nvidia-hopper", "", "patterns/parallel-reductions.md"},
      {"achieved bandwidth percent of peak memory-bound arithmetic intensity", "", "",
       "patterns/roofline-reasoning.md"},
      {"openmp false sharing schedule static num_threads", "x86-avx2", "", "patterns/openmp-cpu.md"},
      {"avx512 mask register tail frequency licence", "x86-avx512", "", "hardware/x86-avx512/overview.md"},
      {"H100 occupancy registers per thread launch bounds", "nvidia-hopper", "",
       "hardware/nvidia-hopper/occupancy-and-launch.md"},
      {"MI300X wave64 ballot shuffle porting from CUDA", "amd-cdna3", "", "hardware/amd-cdna3/wave64-porting.md"},
      {"only the tail elements wrong poisoned NaN output", "", "", "debugging/numerical-mismatch-patterns.md"},
      {"compute-sanitizer racecheck initcheck race condition", "nvidia-hopper", "",
       "debugging/races-and-uninitialized-memory.md"},
      {"L2 flush cudaEvent asynchronous launch timing", "nvidia-hopper", "", "debugging/timing-pitfalls.md"},
  };
  for (const auto& c : cases) {
    auto hits = (*kb)->search({c.query, c.hardware, c.problem, 3});
    bool found = false;
    for (auto& h : hits) found |= h.path == c.expected;
    INFO("query \"" << c.query << "\" should find " << c.expected
                    << (hits.empty() ? " (no hits)" : ", top hit " + hits[0].path));
    CHECK(found);
  }
}
