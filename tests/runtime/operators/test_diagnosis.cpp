// The diagnosis the context-memory agent gives a node: from its verdict and the roofline only.
#include <catch2/catch.hpp>

#include "runtime/operators/diagnosis.hpp"
#include "runtime/problem_loader.hpp"

using namespace kevolve;

namespace {

NodeRecord scored(EvalStatus s, const std::string& reason, double fitness = 0, double ms = 0) {
  NodeRecord n;
  n.state = NodeState::scored;
  n.status = s;
  n.reason = reason;
  n.fitness = fitness;
  n.candidate_ms = ms;
  return n;
}

bool any_has(const Diagnosis& d, const char* what) {
  for (auto& x : d.directives)
    if (x.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("diagnoses name the failure class and what to do about it", "[diagnosis]") {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/rmsnorm_fwd/problem.toml");
  REQUIRE(spec);
  auto d = diagnose(scored(EvalStatus::compile_error, "compiler"), *spec, "candidate.cpp:3:10: error: 'omp_get_num_threads' was not declared in this scope");
  CHECK(d.summary == "compile error");
  CHECK(any_has(d, "#include"));
  d = diagnose(scored(EvalStatus::incorrect, "unwritten"), *spec, "");
  CHECK(any_has(d, "tail"));
  d = diagnose(scored(EvalStatus::incorrect, "nonfinite"), *spec, "");
  CHECK(any_has(d, "NaN"));
  d = diagnose(scored(EvalStatus::rejected, "pointer_reuse"), *spec, "");
  CHECK(d.summary.find("pointer_reuse") != std::string::npos);
  // rmsnorm_fwd moves 4*T*H*2 + 4*H bytes for 4*T*H flops: 0.5 flop/byte, memory-bound
  d = diagnose(scored(EvalStatus::ok, "", 3.0, 4.0), *spec, "");
  CHECK(d.summary.find("memory-bound") != std::string::npos);
  CHECK(d.summary.find("GB/s") != std::string::npos);
  CHECK(any_has(d, "3.00x"));
}
