// A new hardware target is one folder: its constraints.toml limits what the template operator proposes
// and is carried into the LLM operator's prompts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "runtime/operators/llm_operator.hpp"
#include "runtime/operators/template_operator.hpp"
#include "runtime/config/problem_loader.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

TEST_CASE("dropping a hardware folder constrains templates and prompts for that target", "[hardware]") {
  const fs::path root = fs::temp_directory_path() / ("kevolve-hw-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "hardware/tiny-vector-chip");
  std::ofstream(root / "hardware/tiny-vector-chip/constraints.toml")
      << "# a chip no model has seen\nvector_width_bytes = 16\nshared_memory_bytes = 0\nnotes = \"128-bit SIMD "
         "only\"\n";
  auto hw = load_hardware(root.string(), "tiny-vector-chip");
  REQUIRE(hw);
  CHECK(hw->numbers.at("vector_width_bytes") == 16);
  CHECK_FALSE(load_hardware(root.string(), "no-such-chip"));

  // The template operator never proposes more float lanes than 16 bytes hold.
  auto t = find_template("cpu", "rmsnorm_fwd", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  t->hardware = hw->numbers;
  TemplateOperator op(*t);
  Rng rng(3);
  SearchGraph g;
  NodeRecord seed;
  seed.id = 1;
  seed.params = t->defaults();
  seed.state = NodeState::scored;
  seed.status = EvalStatus::ok;
  seed.fitness = 1;
  g.upsert(seed);
  int made = 0;
  for (uint64_t id = 2; id < 80; ++id) {
    auto c = op.make({Operation::mutate, {static_cast<uint64_t>(1 + rng() % g.size())}, 0}, g, rng);
    if (!c) continue;
    ++made;
    CHECK(std::stoi(c->params.at("vec")) * 4 <= 16);
    NodeRecord n = seed;
    n.id = id;
    n.parents = {1};
    n.params = c->params;
    g.upsert(n);
  }
  CHECK(made > 10);

  // The LLM operator's prompt carries the target's constraints.
  llm::LlmConfig lc;
  lc.endpoint = "http://127.0.0.1:9/v1/chat/completions";
  lc.model = "m";
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto prompts = PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(prompts);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/rmsnorm_fwd/problem.toml");
  REQUIRE(spec);
  LlmOperator llm_op(LlmOperatorSetup{*client, *prompts, *spec, "rmsnorm", "tiny-vector-chip", hw->text, nullptr, 1});
  auto [system, user] = llm_op.prompts({Operation::seed, {}, 0}, SearchGraph{}, {});
  CHECK(system.find("tiny-vector-chip") != std::string::npos);
  CHECK(user.find("vector_width_bytes = 16") != std::string::npos);
  CHECK(user.find("128-bit SIMD only") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("an LLM ensemble draws its models by weight, deterministically for a seed", "[llm]") {
  llm::LlmConfig lc;
  lc.endpoint = "http://127.0.0.1:9/v1/chat/completions";
  lc.ensemble = {{"big", 3.0}, {"small", 1.0}};
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/gelu/problem.toml");
  LlmOperator op(LlmOperatorSetup{*client, *PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"),
                                  *spec, "gelu", "x86-avx2", "", nullptr, 1});
  Rng a(5), b(5);
  int big = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string m = op.pick_model(a);
    CHECK(m == op.pick_model(b));
    big += m == "big";
  }
  CHECK(big > 250);  // about 300 of 400 expected at weights 3:1
  CHECK(big < 350);
}
