// The Python interpreter on KernelBench-format problems with the real evaluator (Debian's python3 with
// torch): honest ModelNew candidates are correct and timed; every Python-side hack has a cheater and is
// caught by its check; crashes, hangs and syntax errors get their status; `kevolve suite` tabulates.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/python/python_backend.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

const std::string kRelu = "problems/kernelbench-format/1_relu.py";
const std::string kSoftmax = "problems/kernelbench-format/4_softmax.py";

EvalOptions quick() {
  EvalOptions o = test::quick_options();
  o.threads = 2;
  o.call_timeout_s = 5;
  return o;
}

EvalResult eval_py(const std::string& problem, const std::string& candidate, const EvalOptions& o = quick()) {
  static python::PythonBackend backend("cpu");
  Candidate c;
  c.language = "python";
  c.source = test::read_file(test::source_path(candidate));
  return backend.evaluate_source(python::kernelbench_problem(test::source_path(problem)), c, o);
}

bool no_torch_python() {
  if (!python::torch_python().empty()) return false;
  std::cout << "SKIPPED the Python interpreter tests: no python3 with torch here\n";
  return true;
}

}  // namespace

TEST_CASE("honest ModelNew candidates are correct, timed against eager, and labelled framework rewrites", "[python]") {
  if (no_torch_python()) return;
  for (auto [problem, cand] : {std::pair{kRelu, "tests/backends/python/honest/1_relu__honest.py"},
                               std::pair{kSoftmax, "tests/backends/python/honest/4_softmax__honest.py"},
                               std::pair{std::string("problems/kernelbench-format/9_linear_relu.py"), "tests/backends/python/honest/9_linear_relu__honest.py"}}) {
    const EvalResult r = eval_py(problem, cand);
    INFO(cand << ": " << status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
    CHECK(r.trials == 5);
    CHECK(r.candidate.median_ms > 0);
    CHECK(r.reference.median_ms > 0);
    CHECK(r.candidate.threads == 2);
    CHECK(r.kind == "framework");  // plain PyTorch calls: never counted as a generated kernel
    CHECK(r.profile.find("torch.compile") != std::string::npos);
  }
}

TEST_CASE("every Python-side hack is caught by its check", "[python]") {
  if (no_torch_python()) return;
  struct Case {
    const char* file;
    std::string problem;
    EvalStatus status;
    std::set<std::string> reasons;
  };
  const std::vector<Case> cases = {
      {"try_except_fallback.py", kRelu, EvalStatus::rejected, {"fallback"}},
      {"calls_reference.py", kSoftmax, EvalStatus::rejected, {"reference"}},
      {"extra_thread.py", kRelu, EvalStatus::rejected, {"threads"}},
      {"extra_stream.py", kSoftmax, EvalStatus::rejected, {"streams"}},
      {"precision_downgrade.py", kSoftmax, EvalStatus::rejected, {"precision"}},
      {"patched_timer.py", kRelu, EvalStatus::rejected, {"timer"}},
      {"mutates_input.py", kRelu, EvalStatus::rejected, {"input_mutation"}},
      // Cached by storage address: stale on the next trial if the allocator hands the address back, and
      // always on the refill check (trial 0's tensors with new data).
      {"cached_output.py", kSoftmax, EvalStatus::rejected, {"fresh_data", "pointer_reuse"}},
      {"wrong_values.py", kSoftmax, EvalStatus::incorrect, {"mismatch"}},
  };
  for (auto& c : cases) {
    const EvalResult r = eval_py(c.problem, std::string("tests/backends/python/cheaters/") + c.file);
    INFO(c.file << ": " << status_name(r.status) << " [" << r.reason << "] " << r.message);
    CHECK(r.status == c.status);
    CHECK(c.reasons.count(r.reason) == 1);
  }
}

TEST_CASE("with its detector off, a cheater gets through: the detector is what catches it", "[python]") {
  if (no_torch_python()) return;
  EvalOptions o = quick();
  o.detectors.set(Detector::input_mutation, false);
  const EvalResult r = eval_py(kRelu, "tests/backends/python/cheaters/mutates_input.py", o);
  INFO(r.message);
  CHECK(r.status == EvalStatus::ok);
}

TEST_CASE("a candidate that raises, hangs or does not parse gets its status; the next one runs", "[python]") {
  if (no_torch_python()) return;
  const EvalResult raises = eval_py(kRelu, "tests/backends/python/crashers/raises.py");
  CHECK(raises.status == EvalStatus::runtime_error);
  CHECK(raises.message.find("Error") != std::string::npos);
  EvalOptions o = quick();
  o.call_timeout_s = 2;
  const EvalResult hangs = eval_py(kRelu, "tests/backends/python/crashers/hangs.py", o);
  CHECK(hangs.status == EvalStatus::timeout);
  const EvalResult syntax = eval_py(kRelu, "tests/backends/python/crashers/syntax_error.py");
  CHECK(syntax.status == EvalStatus::compile_error);
  CHECK(syntax.message.find("not valid Python") != std::string::npos);
  CHECK(eval_py(kRelu, "tests/backends/python/honest/1_relu__honest.py").status == EvalStatus::ok);
}

TEST_CASE("kevolve suite runs a folder of problems with the reference baseline and candidates, counted apart", "[python][suite]") {
  if (no_torch_python()) return;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-suite-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "problems");
  fs::create_directories(dir / "candidates");
  for (auto* p : {"1_relu.py", "4_softmax.py"}) fs::copy(test::source_path("problems/kernelbench-format/") + p, dir / "problems" / p);
  fs::copy(test::source_path("tests/backends/python/honest/1_relu__honest.py"), dir / "candidates" / "1_relu__honest.py");
  fs::copy(test::source_path("tests/backends/python/cheaters/wrong_values.py"), dir / "candidates" / "4_softmax__wrong.py");
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve suite " + (dir / "problems").string() + " --candidates " +
                          (dir / "candidates").string() + " --threads 2 --min-time 0.02 --out " + (dir / "table.md").string() + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  INFO(out);
  CHECK(WEXITSTATUS(st) == 0);
  CHECK(out.find("| 1_relu | (reference) | reference | ok |") != std::string::npos);
  CHECK(out.find("| 1_relu | 1_relu__honest.py | framework | ok |") != std::string::npos);
  CHECK(out.find("| 4_softmax | 4_softmax__wrong.py | framework | incorrect [mismatch] |") != std::string::npos);
  CHECK(out.find("- framework (framework-level rewrites, counted apart): 1 of 2 correct") != std::string::npos);
  CHECK(out.find("- reference (the reference itself): 2 of 2 correct") != std::string::npos);
  CHECK(out.find("- kernel") == std::string::npos);  // no generated kernels among these candidates
  CHECK(fs::exists(dir / "table.md"));
  fs::remove_all(dir);
}

TEST_CASE("kevolve run searches a KernelBench-format problem offline with framework-level rewrites", "[python][run]") {
  if (no_torch_python()) return;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-pyrun-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "run.toml") << "[search]\nproblem = \"" << test::source_path(kRelu) << "\"\nid = \"kb-relu\"\nbackend = \"cpu\"\n"
                                  << "max_in_flight = 2\nretime_top = 1\n[budget]\nevaluations = 3\n[store]\npath = \"" << (dir / "store").string()
                                  << "\"\n[eval]\nthreads = 2\nmin_time = 0.02\n";
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve run " + (dir / "run.toml").string() + " --out " + (dir / "out").string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  INFO(out);
  REQUIRE(WEXITSTATUS(st) == 0);
  CHECK(out.find("python backend") != std::string::npos);
  CHECK(out.find("3 evaluated") != std::string::npos);
  REQUIRE(fs::exists(dir / "out" / "best" / "model_new.py"));
  const std::string best = test::read_file((dir / "out" / "best" / "model_new.py").string());
  CHECK(best.find("class ModelNew(_KevolveBase)") != std::string::npos);  // a rewrite of the problem's module
  CHECK(best.find("class Model(") == std::string::npos);                 // which never names the reference
  fs::remove_all(dir);
}
