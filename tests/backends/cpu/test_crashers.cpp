// Candidates that crash, hang, hog memory or do not compile get the right status with a useful message,
// and the caller (and the shared evaluator worker) survives: the next candidate is evaluated normally.
#include <catch2/catch.hpp>

#include "eval_helpers.hpp"

using namespace kevolve;
using kevolve::test::eval_file;
using kevolve::test::quick_options;

namespace {

const char* kSpec = "tests/fixtures/problems/softmax_small/problem.toml";

EvalResult crash(const char* file, EvalOptions o = quick_options()) {
  return eval_file(kSpec, std::string("tests/backends/cpu/crashers/") + file, o);
}

void next_candidate_still_runs() {
  const EvalResult r = eval_file(kSpec, "problems/core/softmax_rows/naive.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::ok);
}

}  // namespace

TEST_CASE("a segfault is a runtime_error naming the signal", "[crashers]") {
  const EvalResult r = crash("segfault.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("Segmentation fault") != std::string::npos);
  next_candidate_still_runs();
}

TEST_CASE("an abort is a runtime_error", "[crashers]") {
  const EvalResult r = crash("abort.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("Aborted") != std::string::npos);
  next_candidate_still_runs();
}

TEST_CASE("an infinite loop is a timeout", "[crashers]") {
  EvalOptions o = quick_options();
  o.call_timeout_s = 1;
  const EvalResult r = crash("infinite_loop.cpp", o);
  INFO(r.message);
  CHECK(r.status == EvalStatus::timeout);
  next_candidate_still_runs();
}

TEST_CASE("runaway allocation hits the data limit and is reported as out of memory", "[crashers]") {
  EvalOptions o = quick_options();
  o.memory_limit_mb = 256;
  const EvalResult r = crash("runaway_alloc.cpp", o);
  INFO(r.message << "\n" << r.runner_log);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("out of memory") != std::string::npos);
  next_candidate_still_runs();
}

TEST_CASE("a compile error carries the compiler's message", "[crashers]") {
  const EvalResult r = crash("compile_error.cpp");
  CHECK(r.status == EvalStatus::compile_error);
  CHECK(r.compile_log.find("undefined_variable") != std::string::npos);
  CHECK(r.compile_log.find("kevolve-build-") == std::string::npos);  // no private temp paths in the log
}

TEST_CASE("a non-zero return code is a runtime_error with the code", "[crashers]") {
  const EvalResult r = crash("nonzero_return.cpp");
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("returned 7") != std::string::npos);
}

TEST_CASE("a missing entry point is a runtime_error naming it", "[crashers]") {
  const EvalResult r = crash("missing_entry.cpp");
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("kevolve_kernel") != std::string::npos);
}

TEST_CASE("exit() inside the kernel is a runtime_error", "[crashers]") {
  const EvalResult r = crash("calls_exit.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.message.find("status 3") != std::string::npos);
  next_candidate_still_runs();
}

TEST_CASE("elements left unwritten make a kernel incorrect, with where", "[crashers]") {
  const EvalResult r = crash("partial_write.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::incorrect);
  CHECK(r.reason == "unwritten");
  CHECK(r.message.find("never written") != std::string::npos);
}

TEST_CASE("wrong values are incorrect with the max error and its place", "[crashers]") {
  const EvalResult r = crash("wrong_values.cpp");
  INFO(r.message);
  CHECK(r.status == EvalStatus::incorrect);
  CHECK(r.reason == "mismatch");
  CHECK(r.max_abs_err > 0);
  CHECK(r.where.find("verify[0]") != std::string::npos);
}

TEST_CASE("a thread bomb ends as a runtime error of its runner, not a timeout", "[crashers]") {
  const EvalResult r = crash("thread_bomb.cpp");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  next_candidate_still_runs();
}

TEST_CASE("a candidate without the entry it names fails at load saying which", "[crashers]") {
  auto spec = load_problem(test::source_path(kSpec));
  REQUIRE(spec);
  Candidate c;
  c.source = test::read_file(test::source_path("problems/core/softmax_rows/naive.cpp"));
  c.entry = "no_such_entry";
  const EvalResult r = test::backend().evaluate_source(*spec, c, quick_options());
  INFO(r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.reason == "load");
  CHECK(r.message.find("exports no function 'no_such_entry'") != std::string::npos);
  next_candidate_still_runs();
}
