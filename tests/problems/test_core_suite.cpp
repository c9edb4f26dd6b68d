// Every problem of problems/core loads, and both its naive and its fast hand-written candidate are
// verified ok by the real evaluator (all shapes, all trials, every detector on). Speed is measured by
// tools/bench_core.sh, never asserted here.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../backends/cpu/eval_helpers.hpp"
#include "knowledge/template_library.hpp"

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
      o.rotate_bytes = 1;  // two timing sets: this test is about correctness, not speed
      const EvalResult r =
          kevolve::test::eval_file("problems/core/" + name + "/problem.toml", "problems/core/" + name + "/" + cand, o);
      INFO(cand << ": " << status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
      CHECK(r.status == EvalStatus::ok);
    }
  }
  CHECK(problems == 12);  // 9 float32 problems and the bf16 variants of rmsnorm_fwd, rmsnorm_bwd and softmax_rows
}

TEST_CASE("every core problem's CPU template compiles at its defaults and is evaluated ok", "[core][templates]") {
  namespace fs = std::filesystem;
  const fs::path core = kevolve::test::source_path("problems/core");
  int templates = 0;
  for (auto& dir : fs::directory_iterator(core)) {
    if (!fs::exists(dir.path() / "problem.toml")) continue;
    const std::string name = dir.path().filename().string();
    auto t = find_template("cpu", name, {kevolve::test::source_path("knowledge")});
    INFO(name << ": " << (t ? "" : t.error()));
    REQUIRE(t);
    auto src = t->render(t->defaults());
    REQUIRE(src);
    auto spec = load_problem((dir.path() / "problem.toml").string());
    REQUIRE(spec);
    Candidate c;
    c.source = *src;
    c.entry = spec->entry;
    EvalOptions o = kevolve::test::quick_options();
    o.call_timeout_s = 60;
    o.rotate_bytes = 1;  // two timing sets: this test is about correctness, not speed
    const EvalResult r = kevolve::test::backend().evaluate_source(*spec, c, o);
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.compile_log);
    CHECK(r.status == EvalStatus::ok);
    ++templates;
  }
  CHECK(templates == 12);
}
