// Every problem of problems/core loads, and both its naive and its fast hand-written candidate are
// verified ok by the real evaluator (all shapes, all trials, every detector on). Speed is measured by
// tools/bench_core.sh, never asserted here.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../backends/cpu/eval_helpers.hpp"

using namespace kevolve;

TEST_CASE("every core problem's naive and fast candidates are correct", "[core]") {
  namespace fs = std::filesystem;
  const fs::path core = kevolve::test::source_path("problems/core");
  int problems = 0;
  for (auto& dir : fs::directory_iterator(core)) {
    if (!fs::exists(dir.path() / "problem.toml")) continue;
    ++problems;
    const std::string name = dir.path().filename().string();
    auto spec = load_problem((dir.path() / "problem.toml").string());
    INFO(name);
    REQUIRE(spec);
    CHECK(spec->verify.size() >= 2);
    for (const char* cand : {"naive.cpp", "fast.cpp"}) {
      REQUIRE(fs::exists(dir.path() / cand));
      EvalOptions o = kevolve::test::quick_options();
      o.call_timeout_s = 60;
      const EvalResult r =
          kevolve::test::eval_file("problems/core/" + name + "/problem.toml", "problems/core/" + name + "/" + cand, o);
      INFO(cand << ": " << status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
      CHECK(r.status == EvalStatus::ok);
    }
  }
  CHECK(problems == 12);  // 9 float32 problems and the bf16 variants of rmsnorm_fwd, rmsnorm_bwd and softmax_rows
}
