// The diagnosis the context-memory agent gives a node: from its verdict and the roofline only.
#include <catch2/catch.hpp>

#include "runtime/operators/diagnosis.hpp"
#include "runtime/config/problem_loader.hpp"

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
  auto d = diagnose(scored(EvalStatus::compile_error, "compiler"), *spec,
                    "candidate.cpp:3:10: error: 'omp_get_num_threads' was not declared in this scope");
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

TEST_CASE("on the GPU the diagnosis uses the GPU benchmark size and places the kernel against the measured bandwidth",
          "[diagnosis]") {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/rmsnorm_fwd/problem.toml");
  REQUIRE(spec);
  REQUIRE(!spec->bench_cuda.empty());
  NodeRecord n;
  n.status = EvalStatus::ok;
  n.fitness = 1.2;
  n.candidate_ms = 0.5;  // 16384 x 4096 floats read and written in 0.5 ms: about 1074 GB/s
  auto slow = diagnose(n, *spec, "", "cuda", 4000);
  CHECK(slow.summary.find("1073.8 GB/s") != std::string::npos);
  CHECK(slow.summary.find("27% of the device's measured copy bandwidth") != std::string::npos);
  CHECK(any_has(slow, "Far below the bandwidth limit"));
  n.candidate_ms = 0.13;
  auto near = diagnose(n, *spec, "", "cuda", 4200);
  CHECK(any_has(near, "near the bandwidth limit"));
  // The CPU benchmark shape is smaller: the same time there is a different bandwidth.
  CHECK(diagnose(n, *spec, "").summary.find("GB/s") != std::string::npos);
  CHECK(diagnose(n, *spec, "").summary.find("copy bandwidth") == std::string::npos);
}
