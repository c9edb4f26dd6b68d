// Every CPU template of the knowledge base loads, covers a core problem, and renders its defaults.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "knowledge/template_library.hpp"
#include "runtime/operators/template_operator.hpp"

#include <algorithm>
#include <stdexcept>

using namespace kevolve;
namespace fs = std::filesystem;

TEST_CASE("every core problem has a CPU template whose defaults render", "[templates]") {
  const fs::path core = std::string(KEVOLVE_SOURCE_DIR) + "/problems/core";
  for (auto& d : fs::directory_iterator(core)) {
    const std::string name = d.path().filename().string();
    auto t = find_template("cpu", name, {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
    INFO(name << ": " << (t ? "" : t.error()));
    REQUIRE(t);
    CHECK(t->problem == name);
    CHECK(t->params.size() >= 3);
    auto src = t->render(t->defaults());
    REQUIRE(src);
    CHECK(src->find("kevolve_kernel") != std::string::npos);
  }
}

TEST_CASE("template errors name the file and key", "[templates]") {
  const fs::path dir = fs::temp_directory_path() / ("kevolve-tmpl-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.mustache") << "x {{a}}";
  std::ofstream(dir / "template.toml") << "problem = \"p\"\nbackend = \"cpu\"\nsource = \"k.mustache\"\n"
                                          "[[params]]\nname = \"a\"\nvalues = [1, 2]\ndefault = 3\n";
  auto t = load_template(dir.string());
  REQUIRE_FALSE(t);
  CHECK(t.error().find("params[0].default") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a constraint can depend on a string parameter's choice and one that cannot be evaluated is refused",
          "[templates]") {
  const fs::path dir = fs::temp_directory_path() / ("kevolve-tmpl-c-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.mustache") << "x {{n}} {{mode}}";
  const std::string head = "problem = \"p\"\nbackend = \"cpu\"\nsource = \"k.mustache\"\n";
  const std::string params =
      "[[params]]\nname = \"mode\"\nvalues = [\"plain\", \"wide\"]\ndefault = \"plain\"\n"
      "[[params]]\nname = \"n\"\nvalues = [1, 8]\ndefault = 1\n";
  // mode = "wide" is visible to the constraint as mode_wide = 1 (mode_plain = 0)
  std::ofstream(dir / "template.toml") << head << "constraints = [\"n <= 4 + 4 * mode_wide\"]\n" << params;
  auto t = load_template(dir.string());
  REQUIRE(t);
  CHECK(t->violated({{"mode", "plain"}, {"n", "8"}}) == "n <= 4 + 4 * mode_wide");
  CHECK(t->violated({{"mode", "wide"}, {"n", "8"}}).empty());
  CHECK(t->violated({{"mode", "plain"}, {"n", "1"}}).empty());
  // A misspelt symbol is an error when the template loads, naming the constraint, not a point that always passes.
  std::ofstream(dir / "template.toml") << head << "constraints = [\"n <= 4 + 4 * mode_widest\"]\n" << params;
  auto bad = load_template(dir.string());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("n <= 4 + 4 * mode_widest") != std::string::npos);
  CHECK(bad.error().find("cannot evaluate") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "directed mutation follows the diagnosis: mostly widen when memory-bound, mostly change the algorithm when "
    "compute-bound",
    "[templates]") {
  auto t = find_template("cpu", "rmsnorm_fwd", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  TemplateOperator op(*t);
  const Params start = t->defaults();
  Rng rng(9);
  int widened = 0, changed_algorithm = 0, memory_algorithm = 0;
  for (int i = 0; i < 100; ++i) {
    Params p = op.directed_mutate(start, "memory-bound: 12.0 GB/s achieved at 0.50 flop/byte", rng);
    for (const char* w : {"threads", "chunk", "vec"})
      if (p.at(w) != start.at(w)) {
        const auto& values = [&]() -> const std::vector<std::string>& {
          for (auto& d : t->params)
            if (d.name == w) return d.values;
          throw std::logic_error("no such parameter");
        }();
        const auto a = std::find(values.begin(), values.end(), start.at(w)),
                   b = std::find(values.begin(), values.end(), p.at(w));
        widened += b == a + 1;
      }
    memory_algorithm += p.at("acc") != start.at("acc");
    Params q = op.directed_mutate(start, "compute-bound: 80.0 GFLOP/s at 8.00 flop/byte", rng);
    changed_algorithm += q.at("acc") != start.at("acc");
  }
  CHECK(widened >= 42);            // 3 in 4 are directed; of those 3 in 4 raise one width parameter by one step
  CHECK(memory_algorithm >= 8);    // and 1 in 4 change the algorithm (expected ~19 of 100, with blind ones)
  CHECK(changed_algorithm >= 40);  // the only string parameter of this template is the accumulator type
  // Without a bound in the diagnosis it is a blind mutation.
  Params blind = op.directed_mutate(start, "incorrect: mismatch", rng);
  CHECK(blind != start);
}

TEST_CASE("a memory-bound mutation sometimes trades between two parameters one constraint ties together",
          "[templates]") {
  // rmsnorm_bwd_bf16 (CUDA): "threads * bps <= 2048" ties the block size to the blocks per SM. From 512 threads
  // at 2 blocks per SM, 256 threads at 4 (the same threads per SM, measured 8 % faster on the H200) is no
  // one-parameter move away.
  auto t = find_template("cuda", "rmsnorm_bwd_bf16", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  TemplateOperator op(*t);
  auto index = [&](const std::string& name) {
    for (size_t i = 0; i < t->params.size(); ++i)
      if (t->params[i].name == name) return i;
    throw std::logic_error("no parameter " + name);
  };
  const auto& pairs = op.coupled();
  CHECK(std::find(pairs.begin(), pairs.end(), std::make_pair(index("threads"), index("bps"))) != pairs.end());
  CHECK(std::find(pairs.begin(), pairs.end(), std::make_pair(index("vec"), index("cache"))) != pairs.end());
  Params start = t->defaults();
  start["threads"] = "512";
  start["bps"] = "2";
  REQUIRE(t->violated(start).empty());
  Params wanted = start;
  wanted["threads"] = "256";
  wanted["bps"] = "4";
  Rng rng(5);
  int reached = 0, trades = 0;
  for (int i = 0; i < 400; ++i) {
    const Params p = op.directed_mutate(start, "memory-bound: 2700 GB/s achieved at 0.50 flop/byte", rng);
    reached += p == wanted;
    const Params q = op.trade(start, rng);
    int up = 0, down = 0, moved = 0;
    for (auto& d : t->params) {
      const auto a = std::find(d.values.begin(), d.values.end(), start.at(d.name));
      const auto b = std::find(d.values.begin(), d.values.end(), q.at(d.name));
      moved += a != b;
      up += b == a + 1;
      down += b + 1 == a;
    }
    CHECK(moved == 2);  // a trade moves exactly two parameters, one a step up and one a step down
    CHECK(up == 1);
    CHECK(down == 1);
    trades += q == wanted;
  }
  CHECK(trades >= 20);  // one of the few possible trades from this parent (~1 in 6)
  CHECK(reached >= 2);  // directed mutations reach it too, now and then (~1 in 60)
  // A template whose constraints tie no two parameters has nothing to trade.
  auto cpu = find_template("cpu", "rmsnorm_fwd", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(cpu);
  TemplateOperator plain(*cpu);
  CHECK(plain.coupled().empty());
  CHECK(plain.trade(cpu->defaults(), rng) == cpu->defaults());
}
