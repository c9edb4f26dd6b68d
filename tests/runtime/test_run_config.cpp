// Search configs: the shipped ones load; mistakes are named with file, key and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "runtime/run_config.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& text) {
  const auto path = fs::temp_directory_path() / ("kevolve-cfg-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path) << text;
  auto c = load_run_config(path.string());
  fs::remove(path);
  REQUIRE_FALSE(c);
  return c.error();
}

}  // namespace

TEST_CASE("the shipped quickstart config loads with its documented choices", "[config]") {
  auto c = load_run_config(std::string(KEVOLVE_SOURCE_DIR) + "/configs/quickstart.toml");
  REQUIRE(c);
  CHECK(c->problem == "rmsnorm_fwd");
  CHECK(c->backend == "cpu");
  CHECK(c->strategy.name == "greedy");
  CHECK(c->search_id == "rmsnorm_fwd-greedy-s1");
  CHECK(c->budget.max_evaluations > 0);
}

TEST_CASE("config mistakes name the file, key and expectation", "[config]") {
  auto e = error_of("[search]\nproblem = \"gelu\"\n[strategy]\nname = \"annealing\"\n");
  CHECK(e.find("strategy") != std::string::npos);
  CHECK(e.find("annealing") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\nbackend = \"tpu\"\n");
  CHECK(e.find("search.backend") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\n[budget]\nevaluations = -3\n");
  CHECK(e.find("budget.evaluations") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\n[budget]\nevaluatons = 3\n");
  CHECK(e.find("budget.evaluatons") != std::string::npos);
  CHECK(e.find("unknown key") != std::string::npos);
  e = error_of("[search]\nbackend = \"cpu\"\n");
  CHECK(e.find("search.problem") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\noperator = \"null\"\n");
  CHECK(e.find("null operator") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\nbackend = \"cuda\"\n[eval]\narch = \"compute_90\"\n");
  CHECK(e.find("eval.arch") != std::string::npos);
  e = error_of("[search\n");
  CHECK(e.find("TOML syntax error") != std::string::npos);
}

TEST_CASE("a CUDA search config: backend, architecture and warm start", "[config]") {
  const auto path = fs::temp_directory_path() / ("kevolve-cfg-cuda-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path) << "[search]\nproblem = \"gelu\"\nbackend = \"cuda\"\nwarm_start = false\n[eval]\narch = \"sm_90\"\n";
  auto c = load_run_config(path.string());
  fs::remove(path);
  REQUIRE(c);
  CHECK(c->backend == "cuda");
  CHECK(c->eval.arch == "sm_90");
  CHECK_FALSE(c->warm_start);
}

TEST_CASE("the shipped LLM example config loads", "[config]") {
  auto c = load_run_config(std::string(KEVOLVE_SOURCE_DIR) + "/configs/llm-example.toml");
  REQUIRE(c);
  CHECK(c->op == "llm");
  CHECK(c->llm.provider == "openai");
  CHECK(c->llm.token_budget == 2000000);
  CHECK(c->hardware == "auto");
}
