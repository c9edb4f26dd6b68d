// Bad specs are refused with the file, the key and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "runtime/config/problem_loader.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

const char* kGood = R"(
name = "t"
reference = "softmax_rows"
[[inputs]]
name = "x"
dtype = "float32"
shape = ["R", "C"]
generator = { kind = "normal", mean = 0.0, std = 1.0 }
[[outputs]]
name = "y"
dtype = "float32"
shape = ["R", "C"]
[tolerance.float32]
atol = 1e-6
rtol = 1e-4
[shapes.bench]
R = 8
C = 8
[[shapes.verify]]
R = 3
C = 5
[[shapes.verify]]
R = 7
C = 9
[roofline]
bytes = "8*R*C"
flops = "5*R*C"
)";

std::string write_spec(const std::string& text) {
  static int n = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("kevolve-spec-test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  fs::create_directories(dir);
  std::ofstream(dir / "problem.toml") << text;
  return (dir / "problem.toml").string();
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto p = s.find(from);
  REQUIRE(p != std::string::npos);
  return s.replace(p, from.size(), to);
}

std::string error_of(const std::string& text) {
  auto p = load_problem(write_spec(text));
  REQUIRE_FALSE(p);
  return p.error();
}

}  // namespace

TEST_CASE("a well-formed spec loads", "[spec]") {
  auto p = load_problem(write_spec(kGood));
  REQUIRE(p);
  CHECK(p->name == "t");
  CHECK(p->verify.size() == 2);
  CHECK(p->bench.at("R") == 8);
}

TEST_CASE("every core problem spec loads", "[spec]") {
  int n = 0;
  for (auto& d : fs::directory_iterator(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core")) {
    auto p = load_problem((d.path() / "problem.toml").string());
    INFO(d.path().string() << ": " << (p ? "" : p.error()));
    CHECK(p);
    ++n;
  }
  CHECK(n == 12);
}

TEST_CASE("spec errors name the file, the key and what was expected", "[spec]") {
  auto e = error_of(replace(kGood, "dtype = \"float32\"\nshape = [\"R\", \"C\"]\ngenerator",
                            "dtype = \"float33\"\nshape = [\"R\", \"C\"]\ngenerator"));
  CHECK(e.find("problem.toml") != std::string::npos);
  CHECK(e.find("inputs[0].dtype") != std::string::npos);
  CHECK(e.find("float32") != std::string::npos);

  e = error_of(replace(kGood, "reference = \"softmax_rows\"\n", ""));
  CHECK(e.find("'reference'") != std::string::npos);

  e = error_of(replace(kGood, "[[shapes.verify]]\nR = 7\nC = 9\n", ""));
  CHECK(e.find("shapes.verify") != std::string::npos);
  CHECK(e.find("at least two") != std::string::npos);

  e = error_of(replace(kGood, "kind = \"normal\"", "kind = \"gaussian\""));
  CHECK(e.find("generator.kind") != std::string::npos);
  CHECK(e.find("normal") != std::string::npos);

  e = error_of(replace(kGood, "bytes = \"8*R*C\"", "bytes = \"8*R*Q\""));
  CHECK(e.find("roofline.bytes") != std::string::npos);
  CHECK(e.find("unknown symbol 'Q'") != std::string::npos);

  e = error_of(replace(kGood, "name = \"t\"", "name = \"t\"\nrefrence = \"x\""));
  CHECK(e.find("'refrence'") != std::string::npos);

  e = error_of(replace(kGood, "[[shapes.verify]]\nR = 3\nC = 5", "[[shapes.verify]]\nR = 3"));
  CHECK(e.find("shapes.verify[0].C") != std::string::npos);

  e = error_of(replace(kGood, "[tolerance.float32]\natol = 1e-6\nrtol = 1e-4\n", ""));
  CHECK(e.find("tolerance.float32") != std::string::npos);

  e = error_of(std::string(kGood) + "[tolerance.int64]\natol = 1\nrtol = 0\n");
  CHECK(e.find("integer outputs must match exactly") != std::string::npos);

  e = error_of("name = [");
  CHECK(e.find("TOML syntax error") != std::string::npos);
}

TEST_CASE("a size too large for any device is named at load, with its element count, not left to the allocator",
          "[spec]") {
  // 2^63 - 1 rows (an overflow of the element count) and a plausible typo (2^40 elements) are both refused.
  auto e = error_of(replace(kGood, "[shapes.bench]\nR = 8", "[shapes.bench]\nR = 9223372036854775807"));
  CHECK(e.find("shapes.bench") != std::string::npos);
  CHECK(e.find("tensor 'x'") != std::string::npos);
  CHECK(e.find("at most 2^36") != std::string::npos);
  e = error_of(replace(kGood, "[[shapes.verify]]\nR = 7\nC = 9", "[[shapes.verify]]\nR = 1048576\nC = 1048576"));
  CHECK(e.find("shapes.verify[1]") != std::string::npos);
  CHECK(e.find("1.09951e+12 elements") != std::string::npos);
  // The largest sizes KernelBench ships (6.4 GB per tensor) load.
  CHECK(
      load_problem(write_spec(replace(kGood, "[shapes.bench]\nR = 8\nC = 8", "[shapes.bench]\nR = 4096\nC = 393216"))));
}

TEST_CASE("problems are found by name under the problem folders", "[spec]") {
  auto p = find_problem("gelu", {std::string(KEVOLVE_SOURCE_DIR) + "/problems"});
  REQUIRE(p);
  CHECK(p->find("core/gelu/problem.toml") != std::string::npos);
  auto missing = find_problem("no_such_problem", {std::string(KEVOLVE_SOURCE_DIR) + "/problems"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("no_such_problem") != std::string::npos);
}
