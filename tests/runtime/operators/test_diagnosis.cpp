// The diagnosis the context-memory agent gives a node: from its verdict and the roofline only.
#include <catch2/catch.hpp>

#include "runtime/operators/diagnosis.hpp"
#include "runtime/config/problem_loader.hpp"
#include "../../backends/cpu/eval_helpers.hpp"

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
  CHECK(d.summary == "compile error: candidate.cpp:3:10: error: 'omp_get_num_threads' was not declared in this scope");
  CHECK(any_has(d, "#include"));
  d = diagnose(scored(EvalStatus::incorrect, "unwritten"), *spec, "");
  CHECK(any_has(d, "tail"));
  d = diagnose(scored(EvalStatus::incorrect, "nonfinite"), *spec, "");
  CHECK(any_has(d, "NaN"));
  d = diagnose(scored(EvalStatus::rejected, "pointer_reuse"), *spec, "");
  CHECK(d.summary.find("pointer_reuse") != std::string::npos);
  // rmsnorm_fwd moves 4*T*H*2 + 4*H bytes for 4*T*H flops: 0.5 flop/byte, memory-bound
  d = diagnose(scored(EvalStatus::ok, "", 3.0, 4.0), *spec, "");
  CHECK(d.summary.rfind("memory-bound by its arithmetic intensity", 0) == 0);  // no bandwidth known: no claim
  CHECK(d.summary.find("GB/s") != std::string::npos);
  CHECK(d.summary.find("not measured") != std::string::npos);
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
  CHECK(slow.summary.rfind("far below the memory floor: compute- or latency-bound", 0) == 0);
  CHECK(any_has(slow, "threads or blocks in flight"));
  n.candidate_ms = 0.4;  // 1342 GB/s: a third of the bandwidth
  CHECK(diagnose(n, *spec, "", "cuda", 4000).summary.rfind("partly memory-bound", 0) == 0);
  n.candidate_ms = 0.13;
  auto near = diagnose(n, *spec, "", "cuda", 4200);
  CHECK(near.summary.rfind("memory-bound: ", 0) == 0);
  CHECK(any_has(near, "near the bandwidth limit"));
  // The CPU benchmark shape is smaller: the same time there is a different bandwidth.
  CHECK(diagnose(n, *spec, "").summary.find("GB/s") != std::string::npos);
  CHECK(diagnose(n, *spec, "").summary.find("of the device's measured copy bandwidth") == std::string::npos);
}

TEST_CASE("a kernel slowed by its arithmetic is not called memory-bound: the measured copy bandwidth decides",
          "[diagnosis]") {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/softmax_rows/problem.toml");
  REQUIRE(spec);
  // softmax_rows at the CPU size moves 67108864 bytes (0.62 flop/byte): at 1 GB/s that is 67.1 ms.
  NodeRecord n = scored(EvalStatus::ok, "", 0.14, 67.108864);
  auto expf_bound = diagnose(n, *spec, "", "cpu", 20);  // the machine copies at 20 GB/s
  INFO(expf_bound.summary);
  CHECK(expf_bound.summary.rfind("far below the memory floor: compute- or latency-bound", 0) == 0);
  CHECK(expf_bound.summary.find("1.0 GB/s achieved, 5% of the device's measured copy bandwidth (20.0 GB/s)") !=
        std::string::npos);
  CHECK(expf_bound.summary.find("memory floor 3.36 ms, the kernel takes 67.1 ms (20.0x the floor)") !=
        std::string::npos);
  CHECK(any_has(expf_bound, "expf"));
  CHECK(any_has(expf_bound, "sustain 12.5 GFLOP/s"));  // 0.625 flop/byte at 20 GB/s
  CHECK_FALSE(any_has(expf_bound, "fuse passes"));
  // The same problem at 16 GB/s on that machine is memory-bound, and fusing passes is the advice.
  n.candidate_ms = 67.108864 / 16;
  auto bound = diagnose(n, *spec, "", "cpu", 20);
  CHECK(bound.summary.rfind("memory-bound: 16.0 GB/s achieved, 80%", 0) == 0);
  CHECK(any_has(bound, "fuse passes"));
  CHECK_FALSE(any_has(bound, "expf"));
}

// The evaluator's report of an incorrect kernel says where the bad elements lie; the diagnosis reads it
// against the output's shape. A softmax whose 8-wide loop leaves each row's last C % 8 columns at 0, evaluated
// by the real CPU evaluator: on C = 33 it fails at [0, 32], one tail column in each of the 7 rows.
TEST_CASE("an incorrect kernel's diagnosis places its bad elements: a row tail the vector loop does not cover",
          "[diagnosis]") {
  const EvalResult r =
      test::eval_file("tests/fixtures/problems/softmax_small/problem.toml", "tests/runtime/operators/kernels/softmax_no_tail.cpp");
  INFO(r.message);
  REQUIRE(r.status == EvalStatus::incorrect);
  auto spec = load_problem(test::source_path("tests/fixtures/problems/softmax_small/problem.toml"));
  REQUIRE(spec);
  NodeRecord n = scored(EvalStatus::incorrect, r.reason);
  n.message = r.message;
  const std::string report = r.message + "\nwhere: " + r.where;  // as the search hands it to an operator
  const Diagnosis d = diagnose(n, *spec, report);
  INFO(d.directives.front());
  CHECK(d.directives.front().find("(7 of 231 wrong) is at index 32 of C = 33") != std::string::npos);
  CHECK(d.directives.front().find("the last columns of each row are a tail the vector loop does not cover") !=
        std::string::npos);
  CHECK(d.directives.front().find("33 = 2 x 16 + 1") != std::string::npos);
}

TEST_CASE("an incorrect kernel's diagnosis names the first column, the first row, a stride or every element",
          "[diagnosis]") {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  const NodeRecord n = scored(EvalStatus::incorrect, "mismatch");
  // Reports in the evaluator's words (backends/harness/verify.cpp describe(), the evaluator's "where").
  auto located = [&](const std::string& count, const std::string& at, const std::string& shape) {
    const std::string report = "output 'y': " + count + " element(s) outside tolerance, first at " + at +
                               ": got 0, expected 0.031 (max abs err 0.031) (verify[1] (" + shape + "), trial 0)";
    return diagnose(n, *spec, report).directives.front();
  };
  CHECK(located("13", "[0, 0]", "R=13, C=257").find("the first column of the rows is wrong") != std::string::npos);
  CHECK(located("200", "[0, 3]", "R=13, C=257").find("only the first row (at most 257 elements)") !=
        std::string::npos);
  CHECK(located("2048", "[0, 1]", "R=16, C=256").find("1 in 2 elements is wrong: a stride pattern") !=
        std::string::npos);
  CHECK(located("3341", "[0, 0]", "R=13, C=257").find("every element is wrong") != std::string::npos);
  CHECK(located("257", "[12, 5]", "R=13, C=257").find("row 12 of 13: the rows before it are right") !=
        std::string::npos);
  // No position in the report: the class's general directive only.
  CHECK(diagnose(n, *spec, "output 'y': wrong").directives.front().rfind("Values are wrong", 0) == 0);
}
