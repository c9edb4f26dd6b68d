// Fuzzing the TOML loaders (runtime/config): problem specs (load_problem) and search configs
// (parse_run_config). Property: every input ends in a value or an error with a message — no crash, no
// hang, no exception escaping — and an accepted config holds only finite numbers.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>

#include "runtime/config/problem_loader.hpp"
#include "runtime/config/run_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kevolve;
using namespace kevolve::fuzz;

namespace {

const std::vector<std::string> kRunConfigKeys{"problem",        "id",
                                              "backend",        "operator",
                                              "template",       "hardware",
                                              "seed",           "max_in_flight",
                                              "build_workers",  "devices",
                                              "retime_top",     "retime_min_time",
                                              "device_class",   "directed",
                                              "warm_start",     "name",
                                              "evaluations",    "seconds",
                                              "no_improvement", "target_speedup",
                                              "path",           "checkpoint_seconds",
                                              "threads",        "trials",
                                              "min_time",       "call_timeout",
                                              "delay_ms",       "ledger",
                                              "listen",         "evaluator_key_env",
                                              "eval_timeout",   "heartbeat",
                                              "searches",       "stay",
                                              "token_env",      "allow_plain_http",
                                              "islands",        "population",
                                              "exploration",    "widening",
                                              "crossover_rate", "model"};

const std::vector<std::string> kProblemKeys{
    "name",   "description", "tags",  "reference",  "naive",     "entry", "params", "inputs", "outputs", "tolerance",
    "shapes", "roofline",    "dtype", "shape",      "generator", "kind",  "low",    "high",   "atol",    "rtol",
    "bytes",  "flops",       "bench", "bench_cuda", "verify",    "value", "N",      "M"};

// The config's numbers a later step divides by, sleeps for or compares with.
bool finite_numbers(const RunConfig& c) {
  for (double v : {c.checkpoint_seconds, c.retime_min_time, c.cluster.eval_timeout_s, c.cluster.heartbeat_s,
                   c.null_delay_ms, c.eval.min_time_s, c.eval.call_timeout_s, c.budget.max_seconds,
                   c.budget.target_speedup, c.strategy.exploration, c.strategy.widening, c.strategy.crossover_rate})
    if (!std::isfinite(v)) return false;
  return true;
}

// The spec's numbers: parameters, tolerances, generator arguments.
bool finite_numbers(const ProblemSpec& p) {
  for (auto& x : p.params)
    if (!std::isfinite(x.value)) return false;
  for (auto& [d, t] : p.tolerances)
    if (!std::isfinite(t.atol) || !std::isfinite(t.rtol)) return false;
  for (auto* v : {&p.inputs, &p.outputs})
    for (auto& t : *v)
      for (auto& [k, x] : t.generator.numbers)
        if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("fuzz: search configs (parse_run_config) end in a config or an error", "[fuzz]") {
  auto corpus = load_corpus("run_config", ".toml");
  REQUIRE(corpus.size() >= 3);
  for (auto& c : corpus) {  // the corpus itself is valid
    auto r = parse_run_config(c, "seed.toml");
    INFO(c);
    INFO((r ? std::string() : r.error()));
    CHECK(r);
  }
  Mutator m(seed());
  const uint64_t n = iterations(20000);
  uint64_t accepted = 0;
  const auto crashes = load_corpus("run_config", ".toml", true);
  for (uint64_t i = 0; i < n + crashes.size(); ++i) {
    const auto input = i < crashes.size() ? crashes[i] : m.toml(corpus[m.below(corpus.size())], corpus, kRunConfigKeys);
    if (trace()) std::cerr << "run_config " << i << "\n";
    try {
      auto r = parse_run_config(input, "fuzz.toml");
      if (r) {
        ++accepted;
        if (!finite_numbers(*r))
          FAIL("accepted a config with a number that is not finite: " << keep_failure("run_config", i, input));
      } else if (r.error().empty()) {
        FAIL("an error without a message: " << keep_failure("run_config", i, input));
      }
    } catch (const std::exception& e) {
      FAIL("exception escaped (" << e.what() << "): " << keep_failure("run_config", i, input));
    }
  }
  INFO("accepted " << accepted << " of " << n);
  CHECK(accepted > 0);  // the mutations are not all fatal: the loader's checks after parsing are reached
}

TEST_CASE("fuzz: problem specs (load_problem) end in a spec or an error", "[fuzz]") {
  auto corpus = load_corpus("problem", ".toml");
  REQUIRE(corpus.size() >= 3);
  // Each input is written as problem.toml into a folder that has the files specs name beside them.
  const auto dir = std::filesystem::temp_directory_path() / ("kevolve-fuzz-work-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  for (auto f : {"naive.cpp", "fast.cpp", "reference.py"}) std::ofstream(dir / f) << "// fixture\n";
  const auto path = (dir / "problem.toml").string();
  Mutator m(seed() + 1);
  const uint64_t n = iterations(10000);
  uint64_t accepted = 0;
  const auto crashes = load_corpus("problem", ".toml", true);
  for (uint64_t i = 0; i < n + crashes.size(); ++i) {
    const auto input = i < crashes.size() ? crashes[i] : m.toml(corpus[m.below(corpus.size())], corpus, kProblemKeys);
    if (trace()) std::cerr << "problem " << i << "\n";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << input;
    try {
      auto r = load_problem(path);
      if (r) {
        ++accepted;
        if (!finite_numbers(*r))
          FAIL("accepted a spec with a number that is not finite: " << keep_failure("problem", i, input));
      } else if (r.error().empty())
        FAIL("an error without a message: " << keep_failure("problem", i, input));
    } catch (const std::exception& e) {
      FAIL("exception escaped (" << e.what() << "): " << keep_failure("problem", i, input));
    }
  }
  INFO("accepted " << accepted << " of " << n);
  CHECK(accepted > 0);
}
