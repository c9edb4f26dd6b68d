// The Python interpreter on KernelBench-format problems with the real evaluator (Debian's python3 with
// torch): honest ModelNew candidates are correct and timed; every Python-side hack has a cheater and is
// caught by its check; crashes, hangs and syntax errors get their status; `kevolve suite` tabulates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tests/test_support/skip.hpp"
#include "tests/test_support/shell.hpp"
#include "backends/python/eval_server.hpp"
#include "backends/python/python_backend.hpp"
#include "tests/backends/python/python_eval_helpers.hpp"

using namespace kevolve;
using namespace kevolve::test;
namespace fs = std::filesystem;

TEST_CASE("honest ModelNew candidates are correct, timed against eager, and labelled framework rewrites", "[python]") {
  if (no_torch_python()) return;
  for (auto [problem, cand] : {std::pair{kRelu, "tests/backends/python/honest/1_relu__honest.py"},
                               std::pair{kSoftmax, "tests/backends/python/honest/4_softmax__honest.py"},
                               std::pair{std::string("problems/kernelbench-small/9_linear_relu.py"),
                                         "tests/backends/python/honest/9_linear_relu__honest.py"}}) {
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
  // Each cheater names the check that catches it and the backstops that may catch it first (on an idle machine
  // a patched clock is also faster than the bytes it must move: impossible_time); any other verdict fails.
  const std::set<std::string> kClockBackstops = {"impossible_time"};
  struct Case {
    const char* file;
    std::string problem;
    EvalStatus status;
    std::string detector;             // the check meant to catch it
    std::set<std::string> backstops;  // checks that may catch it before its own (named, never "any rejection")
    bool static_off = false;          // the static check off: the run-time check behind it must catch the cheater too
    const char* message = "";         // a part of the detector's message that says which check caught it
  };
  const std::vector<Case> cases = {
      {"try_except_fallback.py", kRelu, EvalStatus::rejected, "fallback", {}},
      {"calls_reference.py", kSoftmax, EvalStatus::rejected, "reference", {}},
      {"extra_thread.py", kRelu, EvalStatus::rejected, "threads", {}},
      {"extra_stream.py", kSoftmax, EvalStatus::rejected, "streams", {}},
      {"precision_downgrade.py", kSoftmax, EvalStatus::rejected, "precision", {}},
      {"patched_timer.py", kRelu, EvalStatus::rejected, "timer", kClockBackstops},
      {"mutates_input.py", kRelu, EvalStatus::rejected, "input_mutation", {}},
      // Cached by input layout: trial 1 (new data) gets trial 0's answer.
      {"cached_output.py", kSoftmax, EvalStatus::rejected, "fresh_data", {}},
      // Cached by (address, tensor._version): the trials alternate between two input sets whose buffers the
      // evaluator refills from its own process (no version bump), so trial 2 gets trial 0's answer.
      {"cached_by_version.py", kSoftmax, EvalStatus::rejected, "fresh_data", {}},
      {"patched_event.py", kRelu, EvalStatus::rejected, "timer", kClockBackstops},
      {"wrong_values.py", kSoftmax, EvalStatus::incorrect, "mismatch", {}},
      // Each of these scored ok (the first five with 15-800x) before outputs came back as raw bytes, the
      // evaluator bounded passes with its own clock, checked every timed call and refreshed the timing inputs,
      // and the static check worked on the syntax tree.
      {"pickled_output.py", kRelu, EvalStatus::rejected, "outputs", {}, false, "not a torch.Tensor"},
      {"patched_runner_clock.py", kRelu, EvalStatus::rejected, "timer", kClockBackstops, false, "__main__._clock"},
      {"patched_runner_clock.py", kRelu, EvalStatus::rejected, "timer", kClockBackstops, true, "outside wall clock"},
      {"deferred_output.py", kRelu, EvalStatus::rejected, "timer", kClockBackstops, false, "outside wall clock"},
      {"oversubscribed_clock.py", kRelu, EvalStatus::rejected, "threads", {}, false, "torch.set_num_threads"},
      {"unchecked_calls.py", kRelu, EvalStatus::rejected, "timed_outputs", {}},
      {"cached_by_pointer_sampled.py", kSoftmax, EvalStatus::rejected, "timed_outputs", {}},
      {"dynamic_precision.py", kRelu, EvalStatus::rejected, "precision", {}},
      {"dynamic_import.py", kRelu, EvalStatus::rejected, "threads", {}},
      {"dynamic_name.py", kRelu, EvalStatus::rejected, "dynamic", {}},
      // Each of these scored ok before the runner confined itself (uid 65534 in namespaces of its own, seccomp);
      // the last three reach libc through ctypes or os calls the static check does not refuse: the sandbox is
      // what stops them.
      {"reads_evaluator_memory.py", kRelu, EvalStatus::runtime_error, "exception", {}, false, "Error: [Errno"},
      {"renices_evaluator.py", kRelu, EvalStatus::rejected, "isolation", {}, false, "SIGSYS"},
      {"makes_fifo.py", kRelu, EvalStatus::rejected, "isolation", {}, false, "SIGSYS"},
      {"opens_socket.py", kRelu, EvalStatus::rejected, "isolation", {}, false, "SIGSYS"},
  };
  for (auto& c : cases) {
    EvalOptions o = quick_py();
    if (c.static_off) o.detectors.set(Detector::isolation, false);
    // `harness_error [busy]` says the machine's other work starved the reference (no verdict on the candidate):
    // that evaluation is taken again, three times at most.
    EvalResult r;
    for (int i = 0; i < 3; ++i) {
      r = eval_py(c.problem, std::string("tests/backends/python/cheaters/") + c.file, o);
      if (!(r.status == EvalStatus::harness_error && r.reason == "busy")) break;
    }
    INFO(c.file << (c.static_off ? " (static check off)" : "") << ": " << status_name(r.status) << " [" << r.reason
                << "] " << r.message);
    CHECK(r.status == c.status);
    CHECK((r.reason == c.detector || c.backstops.count(r.reason) == 1));
    if (r.reason == c.detector) CHECK(r.message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("processes a ModelNew starts outside the runner at import gain nothing and are gone when it ends", "[python]") {
  if (no_torch_python()) return;
  // clone(CLONE_PARENT) + setsid at import, spinning while the runner is stopped (the reference's timing): with a
  // cgroup per runner they are frozen with it, so the speedup stays its honest twin's; without one the runner's
  // filter kills the clone. Two evaluations of each, interleaved, the best of each compared (load, not the
  // cheat, moves one evaluation); the bound is a generous ratio (the cheat gained 2-3x).
  const std::string honest = "tests/backends/python/honest/4_softmax__honest.py";
  const std::string cheater = "tests/backends/python/cheaters/clone_parent_spinner.py";
  // A machine whose other work starves the reference gives `harness_error [busy]` (no speedup to compare): such
  // an evaluation is taken again, three times at most.
  auto eval_unless_busy = [](const std::string& file) {
    EvalResult r;
    for (int i = 0; i < 3; ++i) {
      r = eval_py(kSoftmax, file);
      if (!(r.status == EvalStatus::harness_error && r.reason == "busy")) break;
    }
    return r;
  };
  double best_honest = 0, best_cheat = 0;
  for (int round = 0; round < 2; ++round) {
    const EvalResult h = eval_unless_busy(honest);
    INFO("honest: " << status_name(h.status) << " [" << h.reason << "] " << h.message);
    if (h.status == EvalStatus::harness_error && h.reason == "busy") {
      say_skipped("this machine stayed too busy to time the reference: " + h.message);
      return;
    }
    REQUIRE(h.status == EvalStatus::ok);
    best_honest = std::max(best_honest, h.speedup);
    const EvalResult c = eval_unless_busy(cheater);
    INFO("cheater: " << status_name(c.status) << " [" << c.reason << "] " << c.message << "\nsandbox: " << c.sandbox);
    // Nothing it started outlives its evaluation, whatever the verdict.
    CHECK(std::system("grep -qx kvcloneparent /proc/[0-9]*/comm 2>/dev/null") != 0);
    if (c.sandbox.find("no cgroup") != std::string::npos) {
      CHECK(c.status == EvalStatus::rejected);
      CHECK(c.reason == "isolation");
      return;
    }
    CHECK(c.sandbox.find("cgroup v") != std::string::npos);
    if (c.status == EvalStatus::harness_error && c.reason == "busy") {
      say_skipped("this machine stayed too busy to time the reference: " + c.message);
      return;
    }
    REQUIRE(c.status == EvalStatus::ok);
    best_cheat = std::max(best_cheat, c.speedup);
  }
  INFO("best speedup: cheater " << best_cheat << "x, honest twin " << best_honest << "x");
  CHECK(best_cheat < 1.5 * best_honest);
}

TEST_CASE("with its detector off, a cheater gets through: the detector is what catches it", "[python]") {
  if (no_torch_python()) return;
  EvalOptions o = quick_py();
  o.detectors.set(Detector::input_mutation, false);
  const EvalResult r = eval_py(kRelu, "tests/backends/python/cheaters/mutates_input.py", o);
  INFO(r.message);
  CHECK(r.status == EvalStatus::ok);
}

TEST_CASE("each Python detector is proven twice: it catches its cheater, and with it off the cheater gets through",
          "[python]") {
  if (no_torch_python()) return;
  struct Case {
    const char* file;
    std::string problem;
    Detector detector;
    std::vector<Detector> backstops;  // the checks that also catch it once `detector` is off
    std::vector<Detector> before;     // switched off to let `detector` be the one that decides
  };
  const std::vector<Case> cases = {
      // The static check; behind it the timed outputs catch the bfloat16 error now and then.
      {"precision_downgrade.py", kSoftmax, Detector::isolation, {Detector::timed_outputs}, {}},
      {"cached_output.py", kSoftmax, Detector::fresh_data, {Detector::pointer_reuse, Detector::impossible_time}, {}},
      // Caught by fresh_data first; with that off, by the refill check.
      {"cached_by_version.py", kSoftmax, Detector::pointer_reuse, {Detector::impossible_time}, {Detector::fresh_data}},
  };
  for (auto& c : cases) {
    EvalOptions caught = quick_py();
    for (Detector d : c.before) caught.detectors.set(d, false);
    const EvalResult r = eval_py(c.problem, std::string("tests/backends/python/cheaters/") + c.file, caught);
    INFO(c.file << " on: " << status_name(r.status) << " [" << r.reason << "] " << r.message);
    CHECK(r.status == EvalStatus::rejected);
    if (c.detector == Detector::isolation)
      CHECK(r.reason == "precision");  // the static check's reason names what it refused
    else
      CHECK(r.reason == detector_name(c.detector));
    EvalOptions off = caught;
    off.detectors.set(c.detector, false);
    for (Detector d : c.backstops) off.detectors.set(d, false);
    const EvalResult through = eval_py(c.problem, std::string("tests/backends/python/cheaters/") + c.file, off);
    INFO(c.file << " off: " << status_name(through.status) << " [" << through.reason << "] " << through.message);
    CHECK(through.status == EvalStatus::ok);
  }
}

TEST_CASE("the Python runner sees no process of another user, cannot write under / and has a bounded private /tmp",
          "[python][sandbox]") {
  if (no_torch_python()) return;
  if (geteuid() != 0) {
    kevolve::test::say_skipped("a mount namespace needs root (the Python runner uses a user namespace here)");
    return;
  }
  const EvalResult honest = eval_py(kRelu, "tests/backends/python/honest/1_relu__honest.py");
  INFO("honest: " << status_name(honest.status) << " [" << honest.reason << "] " << honest.message
                  << "\nsandbox: " << honest.sandbox);
  REQUIRE(honest.status == EvalStatus::ok);
  if (honest.sandbox.find("no mount namespace") != std::string::npos) {  // an unprivileged container: said, not hidden
    kevolve::test::say_skipped("this machine refuses the Python runner a mount namespace (" + honest.sandbox + ")");
    return;
  }
  CHECK(honest.sandbox.find("own /proc") != std::string::npos);
  CHECK(honest.sandbox.find("read-only root") != std::string::npos);
  CHECK(honest.sandbox.find("private /tmp") != std::string::npos);
  CHECK(honest.sandbox.find("private /dev/shm") != std::string::npos);
  // Each poisons its output when the sandbox lets it through (it saw the evaluator in /proc, wrote under /,
  // got 1 GiB of /tmp); confined, each computes honestly.
  for (const char* f : {"sees_other_processes.py", "writes_root.py", "fills_tmp.py"}) {
    const EvalResult r = eval_py(kRelu, std::string("tests/backends/python/cheaters/") + f);
    INFO(f << ": " << status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox);
    CHECK(r.status == EvalStatus::ok);
  }
}

TEST_CASE("on a GPU the runner is confined and work it leaves running is caught before the reference is timed",
          "[python][cuda]") {
  if (no_torch_python()) return;
  if (test::shell(python::torch_python() + " -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)'")
          .code != 0) {
    kevolve::test::say_skipped("no CUDA device for the Python evaluator");
    return;
  }
  static python::PythonBackend gpu("cuda");
  auto eval_gpu = [&](const std::string& problem, const std::string& file, EvalOptions o = quick_py()) {
    Candidate c;
    c.language = "python";
    c.source = test::read_file(test::source_path("tests/backends/python/cheaters/" + file));
    return gpu.evaluate_source(python::kernelbench_problem(test::source_path(problem)), c, o);
  };
  {
    // Two trusted clocks see the work left running: the outside wall clock of the candidate's own passes,
    // which the other context's time slices stretch beyond what the runner reports (impossible_time: "timer"),
    // and the idle probe before the reference is timed (queued_work). Each is proven alone.
    const EvalResult q = eval_gpu(kSoftmax, "queued_work.py");
    INFO(status_name(q.status) << " [" << q.reason << "] " << q.message);
    CHECK(q.status == EvalStatus::rejected);
    EvalOptions no_clock = quick_py();
    no_clock.detectors.set(Detector::impossible_time, false);
    const EvalResult probe = eval_gpu(kSoftmax, "queued_work.py", no_clock);
    INFO(status_name(probe.status) << " [" << probe.reason << "] " << probe.message);
    CHECK(probe.status == EvalStatus::rejected);
    CHECK(probe.reason == "queued_work");
    EvalOptions neither = no_clock;
    neither.detectors.set(Detector::queued_work, false);
    const EvalResult through = eval_gpu(kSoftmax, "queued_work.py", neither);
    INFO(status_name(through.status) << " [" << through.reason << "] " << through.message);
    CHECK(through.status == EvalStatus::ok);
  }
  {
    // As root the runner has a /proc of its own with hidepid=2: the evaluator's files are not there. Not root
    // it keeps the evaluator's uid, and the evaluator (not dumpable) refuses them.
    const EvalResult m = eval_gpu(kRelu, "reads_evaluator_memory.py");
    INFO(status_name(m.status) << " [" << m.reason << "] " << m.message);
    CHECK(m.status == EvalStatus::runtime_error);
    CHECK(m.message.find(geteuid() == 0 ? "FileNotFoundError" : "PermissionError") != std::string::npos);
  }
  for (const char* f : {"renices_evaluator.py", "makes_fifo.py", "opens_socket.py"}) {
    const EvalResult r = eval_gpu(kRelu, f);
    INFO(f << ": " << status_name(r.status) << " " << r.message);
    CHECK(r.status == EvalStatus::rejected);
    CHECK(r.reason == "isolation");
  }
}

TEST_CASE("a candidate that raises, hangs or does not parse gets its status, and the next one runs", "[python]") {
  if (no_torch_python()) return;
  const EvalResult raises = eval_py(kRelu, "tests/backends/python/crashers/raises.py");
  CHECK(raises.status == EvalStatus::runtime_error);
  CHECK(raises.message.find("Error") != std::string::npos);
  EvalOptions o = quick_py();
  o.call_timeout_s = 2;
  const EvalResult hangs = eval_py(kRelu, "tests/backends/python/crashers/hangs.py", o);
  CHECK(hangs.status == EvalStatus::timeout);
  const EvalResult syntax = eval_py(kRelu, "tests/backends/python/crashers/syntax_error.py");
  CHECK(syntax.status == EvalStatus::compile_error);
  CHECK(syntax.message.find("not valid Python") != std::string::npos);
  CHECK(eval_py(kRelu, "tests/backends/python/honest/1_relu__honest.py").status == EvalStatus::ok);
}

namespace {

// The pids of this process's children whose command line contains `what`.
std::set<pid_t> children_running(const std::string& what) {
  std::set<pid_t> out;
  for (auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != getpid() || state == 'Z') continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string argv((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    for (auto& c : argv)
      if (c == '\0') c = ' ';
    if (argv.find(what) != std::string::npos) out.insert(std::stoi(name));
  }
  return out;
}

}  // namespace

TEST_CASE("one evaluator process serves a device's candidates, each in a fresh runner, and a dead one is replaced",
          "[python]") {
  if (no_torch_python()) return;
  const auto others = children_running("kevolve_py_eval.py --serve");  // servers of other backends in this process
  auto mine = [&] {
    std::set<pid_t> s;
    for (pid_t p : children_running("kevolve_py_eval.py --serve"))
      if (!others.count(p)) s.insert(p);
    return s;
  };
  python::PythonBackend backend("cpu");
  Candidate c;
  c.language = "python";
  c.source = test::read_file(test::source_path("tests/backends/python/honest/1_relu__honest.py"));
  const ProblemSpec spec = python::kernelbench_problem(test::source_path(kRelu));
  REQUIRE(backend.evaluate_source(spec, c, quick_py()).status == EvalStatus::ok);
  const auto server = mine();
  REQUIRE(server.size() == 1);
  // A candidate that hangs has its runner killed; the evaluator itself stays.
  Candidate hang = c;
  hang.source = test::read_file(test::source_path("tests/backends/python/crashers/hangs.py"));
  EvalOptions o = quick_py();
  o.call_timeout_s = 2;
  CHECK(backend.evaluate_source(spec, hang, o).status == EvalStatus::timeout);
  CHECK(backend.evaluate_source(spec, c, quick_py()).status == EvalStatus::ok);
  CHECK(mine() == server);
  // Killed between two candidates (by anything: the OOM killer, a user), it is started again.
  kill(*server.begin(), SIGKILL);
  for (int i = 0; i < 100 && !mine().empty(); ++i) usleep(50000);
  const EvalResult after = backend.evaluate_source(spec, c, quick_py());
  INFO(after.message);
  CHECK(after.status == EvalStatus::ok);
  const auto again = mine();
  CHECK(again.size() == 1);
  CHECK(again != server);
}

TEST_CASE("the evaluator server of a device is started with that device's GPU in its environment", "[python]") {
  const std::string py = python::torch_python().empty() ? "python3" : python::torch_python();
  const fs::path script = fs::temp_directory_path() / ("kevolve-fake-serve-" + std::to_string(getpid()) + ".py");
  std::ofstream(script) << "import json, os, sys\nfor line in sys.stdin:\n"
                           "    print(json.dumps({'visible': os.environ.get('CUDA_VISIBLE_DEVICES', ''), 'argv': "
                           "json.loads(line)['argv']}), flush=True)\n";
  python::EvalServer server;
  server.set_env("CUDA_VISIBLE_DEVICES", "GPU-7");
  auto answer = server.ask(py, script.string(), {"--problem", "p.py"}, 30);
  REQUIRE(answer);
  CHECK(*answer == "{\"visible\": \"GPU-7\", \"argv\": [\"--problem\", \"p.py\"]}");
  auto again = server.ask(py, script.string(), {"x"}, 30);  // the same process answers the next request
  REQUIRE(again);
  CHECK(again->find("\"argv\": [\"x\"]") != std::string::npos);
  server.stop();
  fs::remove(script);
}

TEST_CASE("kevolve suite runs a folder of problems with the reference baseline and candidates, counted apart",
          "[python][suite]") {
  if (no_torch_python()) return;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-suite-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "problems");
  fs::create_directories(dir / "candidates");
  for (auto* p : {"1_relu.py", "4_softmax.py"})
    fs::copy(test::source_path("problems/kernelbench-small/") + p, dir / "problems" / p);
  fs::copy(test::source_path("tests/backends/python/honest/1_relu__honest.py"),
           dir / "candidates" / "1_relu__honest.py");
  fs::copy(test::source_path("tests/backends/python/cheaters/wrong_values.py"),
           dir / "candidates" / "4_softmax__wrong.py");
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve suite " + (dir / "problems").string() +
                          " --candidates " + (dir / "candidates").string() + " --threads 2 --min-time 0.02 --out " +
                          (dir / "table.md").string() + " 2>/dev/null";
  const auto [st, out] = test::shell(cmd);
  INFO(out);
  CHECK(st == 0);
  CHECK(out.find("| 1_relu | (reference) | reference | ok |") != std::string::npos);
  CHECK(out.find("| 1_relu | 1_relu__honest.py | framework | ok |") != std::string::npos);
  CHECK(out.find("| 4_softmax | 4_softmax__wrong.py | framework | incorrect [mismatch] |") != std::string::npos);
  CHECK(out.find("- framework (framework-level rewrites, counted apart): 1 of 2 correct") != std::string::npos);
  CHECK(out.find("- reference (the reference itself): 2 of 2 correct") != std::string::npos);
  CHECK(out.find("- kernel") == std::string::npos);  // no generated kernels among these candidates
  CHECK(fs::exists(dir / "table.md"));
  fs::remove_all(dir);
}

TEST_CASE("the family matcher finds which template family a problem computes, by behaviour", "[python][match]") {
  if (no_torch_python()) return;
  struct Case {
    const char* file;
    const char* family;
    std::vector<std::string> inputs, params;
  };
  const std::vector<Case> cases = {
      {"problems/kernelbench-small/4_softmax.py", "softmax_rows", {"arg:0"}, {}},
      {"problems/kernelbench-small/5_layernorm.py",
       "layernorm_fwd",
       {"arg:0", "state:ln.weight", "state:ln.bias"},
       {"attr:ln.eps"}},
      {"problems/kernelbench-small/7_rmsnorm.py", "rmsnorm_fwd", {"arg:0", "state:weight"}, {"attr:eps"}},
      {"problems/kernelbench-small/1_relu.py", "", {}, {}},
      {"problems/kernelbench-small/8_gelu_scale.py", "", {}, {}},  // gelu(x) * scale is not GELU alone
      {"problems/kernelbench-small/9_linear_relu.py", "", {}, {}},
  };
  for (auto& c : cases) {
    auto m = python::match_family(test::source_path(c.file));
    INFO(c.file << ": " << (m ? m->how : m.error()));
    REQUIRE(m);
    CHECK(m->family == c.family);
    CHECK(m->inputs == c.inputs);
    CHECK(m->params == c.params);
  }
  auto m = python::match_family(test::source_path("problems/kernelbench-small/5_layernorm.py"));
  REQUIRE(m);
  CHECK(m->shape == std::vector<int64_t>{16, 512, 1024});
  // A file that is no KernelBench problem: the error names it and what was expected.
  const fs::path bad = fs::temp_directory_path() / ("kevolve-nomodel-" + std::to_string(getpid()) + ".py");
  std::ofstream(bad) << "import torch\n\ndef get_inputs():\n    return [torch.randn(4)]\n";
  auto broken = python::match_family(bad.string());
  REQUIRE_FALSE(broken);
  CHECK(broken.error().find(bad.string()) != std::string::npos);
  CHECK(broken.error().find("defines Model, get_inputs and get_init_inputs; 'Model' is missing") != std::string::npos);
  fs::remove(bad);
}

TEST_CASE("the family analysis gives the family, its reason and the generator's spaces, kept per problem file",
          "[python][families]") {
  if (no_torch_python()) return;
  auto a = python::analyse_families(test::source_path("tests/fixtures/kernelbench/softmax_dim1_small.py"));
  INFO((a ? a->reason : a.error()));
  REQUIRE(a);
  CHECK(a->family == "softmax");
  CHECK(a->graph == "softmax");
  CHECK(a->layout == "outer");
  CHECK(a->reason.find("softmax over data of shape [3, 11, 37], reducing dims [1]") != std::string::npos);
  // The CPU space in the generator's order, strings told apart from numbers, and its default point.
  REQUIRE(a->cpu.params.size() == 3);
  CHECK(a->cpu.params[0].name == "schedule");
  CHECK(a->cpu.params[0].values == std::vector<std::string>{"rows", "split"});
  CHECK(a->cpu.params[0].text);
  CHECK(a->cpu.params[1].name == "grain");
  CHECK(a->cpu.params[1].values == std::vector<std::string>{"0", "16"});
  CHECK_FALSE(a->cpu.params[1].text);
  CHECK(a->cpu.defaults == Params{{"schedule", "rows"}, {"grain", "0"}, {"online", "1"}});
  const FamilyParam* cache = a->cuda.find("cache");
  REQUIRE(cache);
  CHECK(cache->text);
  CHECK(a->space("cuda").defaults.count("threads") == 1);
  // A point of the space gives a ModelNew, with the parameters used; a value outside it, the generator's error.
  const std::string file = test::source_path("tests/fixtures/kernelbench/softmax_dim1_small.py");
  auto k = python::generate_family_kernel(file, "cpu", {{"schedule", "split"}, {"grain", "16"}}, a->cpu);
  INFO((k ? "" : k.error()));
  REQUIRE(k);
  CHECK(k->params == Params{{"schedule", "split"}, {"grain", "16"}, {"online", "1"}});  // online: its default
  CHECK(k->source.find("class ModelNew(_KevolveBase)") != std::string::npos);
  CHECK(k->source.find("family softmax, cpu") != std::string::npos);
  auto outside = python::generate_family_kernel(file, "cpu", {{"grain", "3"}}, a->cpu);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().find("grain = 3 is outside its space") != std::string::npos);
  // No family: the reason a user can read.
  auto none = python::analyse_families(test::source_path("problems/kernelbench-small/6_matmul.py"));
  REQUIRE(none);
  CHECK(none->family.empty());
  CHECK(none->reason == "no pointwise op or reduction after the library ops: nothing to fuse");
  CHECK(none->cpu.params.empty());
  // Kept per file: asked again, the same answer without running the script; a changed file is analysed afresh.
  const fs::path copy = fs::temp_directory_path() / ("kevolve-family-" + std::to_string(getpid()) + ".py");
  fs::copy_file(test::source_path("tests/fixtures/kernelbench/softmax_dim1_small.py"), copy,
                fs::copy_options::overwrite_existing);
  auto first = python::analyse_families(copy.string());
  REQUIRE(first);
  CHECK(first->family == "softmax");
  const auto t0 = std::chrono::steady_clock::now();
  auto again = python::analyse_families(copy.string());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(again);
  CHECK(again->family == "softmax");
  CHECK(secs < 0.2);  // the script takes a second or more (it imports torch)
  std::string text = test::read_file(copy.string());
  text.replace(text.find("F.softmax(x, dim=1)"), 19, "torch.sort(x, dim=1)[0]");
  std::ofstream(copy) << text;
  auto changed = python::analyse_families(copy.string());
  REQUIRE(changed);
  CHECK(changed->family.empty());
  CHECK(changed->reason.find("sort") != std::string::npos);
  fs::remove(copy);
}

namespace {

// The row of `problem` in a markdown table, split into its cells.
std::vector<std::string> table_row(const std::string& table, const std::string& problem) {
  const auto at = table.find("| " + problem + " |");
  if (at == std::string::npos) return {};
  std::istringstream line(table.substr(at + 2, table.find('\n', at) - at - 2));
  std::vector<std::string> cells;
  for (std::string cell; std::getline(line, cell, '|');) {
    const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return cells;
}

std::string run_kevolve(const std::string& args, int& status) {
  auto r = test::shell(std::string(KEVOLVE_BIN_DIR) + "/kevolve " + args);
  status = r.code;
  return r.out;
}

}  // namespace

TEST_CASE("kevolve suite --budget searches every problem and counts its best generated kernel apart from rewrites",
          "[python][suite]") {
  if (no_torch_python()) return;
  // Without a cgroup the Python runner refuses new processes, so kernels built by load_inline cannot run here.
  const auto probe = test::shell(python::torch_python() + " -c \"import sys; sys.path.insert(0, '" +
                                 test::source_path("backends/python") +
                                 "'); import kevolve_py_cgroup as c; g, why = c.EvalCgroup.create('probe'); "
                                 "print('NO-CGROUP ' + why if g is None else 'cgroup'); g and g.remove()\"");
  if (probe.out.find("NO-CGROUP") != std::string::npos) {
    test::say_skipped("no cgroup can be made here, so the Python runner refuses the compiler a generated kernel "
                      "needs: " + probe.out);
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("kevolve-suite-budget-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "problems");
  for (auto* p : {"1_relu.py", "4_softmax.py", "6_matmul.py"})
    fs::copy(test::source_path("problems/kernelbench-small/") + p, dir / "problems" / p);
  int st = 0;
  const std::string out = run_kevolve(
      "suite " + (dir / "problems").string() + " --budget 3 --threads 2 --min-time 0.02 --store " +
          (dir / "store").string() + " --out " + (dir / "table.md").string() + " 2>" + (dir / "log").string(),
      st);
  const std::string log = test::read_file((dir / "log").string());
  INFO(out << "\n" << log);
  REQUIRE(st == 0);
  CHECK(out.find("| problem | reference | family | template | kernels correct | best kernel |") != std::string::npos);
  // 1_relu: of the pointwise family (generated kernels), of no template family; its best kernel is correct.
  const auto relu = table_row(out, "1_relu");
  REQUIRE(relu.size() == 18);
  CHECK(relu[1] == "ok");  // the reference baseline
  CHECK(relu[2] == "pointwise");
  CHECK(relu[3] == "–");  // no template family
  CHECK(relu[4].find(" of ") != std::string::npos);
  CHECK(relu[4].rfind("0 of", 0) != 0);  // at least one generated kernel was correct
  CHECK(relu[5] == "ok");
  // 4_softmax: generated softmax kernels and the softmax_rows template's kernels; the best one is correct.
  const auto softmax = table_row(out, "4_softmax");
  REQUIRE(softmax.size() == 18);
  CHECK(softmax[1] == "ok");
  CHECK(softmax[2] == "softmax");
  CHECK(softmax[3] == "softmax_rows");
  CHECK(softmax[4].find(" of ") != std::string::npos);
  CHECK(softmax[4].rfind("0 of", 0) != 0);  // at least one kernel was correct
  CHECK(softmax[5] == "ok");
  CHECK(softmax[6].back() == 'x');  // its speedup over eager
  // 6_matmul: no family, and the matcher's reason in the family column; framework rewrites only.
  const auto matmul = table_row(out, "6_matmul");
  REQUIRE(matmul.size() == 18);
  CHECK(matmul[1] == "ok");
  CHECK(matmul[2] == "none: no pointwise op or reduction after the library ops: nothing to fuse");
  CHECK(matmul[3] == "–");
  CHECK(matmul[4] == "–");
  CHECK(matmul[5] == "no kernel family");
  CHECK(matmul[9] == "ok");  // its best rewrite
  // The roofline: a pointwise op is bound by the bytes it moves, a matmul of 512 x 512 x 1024 by its FLOPs; "at floor" says
  // what share of the floor's time each run reached.
  CHECK(relu[14].find(" memory") != std::string::npos);
  CHECK(relu[15].find(" %") != std::string::npos);
  CHECK(matmul[14].find(" compute") != std::string::npos);
  CHECK(matmul[15].find(" %") != std::string::npos);
  CHECK(out.find("Roofline (floor ms, measured with each reference baseline)") != std::string::npos);
  CHECK(out.find("- correct: 2 of 3 problems (67 %)") != std::string::npos);
  CHECK(out.find("- fast_1 (the best kernel is correct and faster than eager): ") != std::string::npos);
  CHECK(out.find("Reference baseline (each problem's own Model): correct on 3 of 3 problems (100 %)") !=
        std::string::npos);
  CHECK(test::read_file((dir / "table.md").string()) == out);
  // Progress on stderr: the family of each problem, or why none was found, and the template family.
  CHECK(log.find("kevolve suite: 4_softmax: family softmax (traced by") != std::string::npos);
  CHECK(log.find("kernel template family softmax_rows") != std::string::npos);
  CHECK(log.find("kevolve suite: 1_relu: family pointwise (") != std::string::npos);
  CHECK(log.find("kevolve suite: 6_matmul: no family: no pointwise op or reduction after the library ops") !=
        std::string::npos);
  CHECK(log.find("kevolve suite: 4_softmax: search of 3 evaluations") != std::string::npos);
  // Every search ends with a line saying how, and each best re-evaluated says what it came to.
  CHECK(log.find("kevolve suite: 4_softmax: search ended (") != std::string::npos);
  CHECK(log.find("kevolve suite: 6_matmul: search ended (") != std::string::npos);
  CHECK(log.find("kevolve suite: 4_softmax: the best kernel re-evaluated: ") != std::string::npos);
  CHECK(log.find("kevolve suite: this run: 3 of 3 problems worked on (0 finished earlier), ") != std::string::npos);
  CHECK(log.find(" evaluations per minute") != std::string::npos);
  // Run again on the same store: finished problems are not evaluated again, and the table is the same.
  const std::string again =
      run_kevolve("suite " + (dir / "problems").string() + " --budget 3 --threads 2 --min-time 0.02 --store " +
                      (dir / "store").string() + " 2>" + (dir / "log2").string(),
                  st);
  CHECK(st == 0);
  CHECK(again == out);
  CHECK(test::read_file((dir / "log2").string()).find("kevolve suite: 4_softmax: finished earlier") !=
        std::string::npos);
  // One shard of two (e.g. one per GPU): only its problems (sorted positions 1, 3, ...).
  const std::string shard = run_kevolve("suite " + (dir / "problems").string() +
                                            " --budget 3 --threads 2 --min-time 0.02 --shard 1/2 --store " +
                                            (dir / "store").string() + " 2>/dev/null",
                                        st);
  CHECK(st == 0);
  CHECK(table_row(shard, "4_softmax") == table_row(out, "4_softmax"));
  CHECK(table_row(shard, "1_relu").empty());
  // The shards' stores brought together: results found in --results-from count as done, nothing is evaluated.
  const std::string merged =
      run_kevolve("suite " + (dir / "problems").string() + " --budget 3 --threads 2 --min-time 0.02 --store " +
                      (dir / "other-store").string() + " --results-from " + (dir / "store").string() + " 2>" +
                      (dir / "log3").string(),
                  st);
  CHECK(st == 0);
  CHECK(merged == out);
  CHECK(test::read_file((dir / "log3").string()).find("kevolve suite: 1_relu: finished earlier (") !=
        std::string::npos);
  CHECK(test::read_file((dir / "log3").string()).find("reference baseline") == std::string::npos);
  // Another budget on the same store: a new search, but the reference baseline measured above is not measured again.
  run_kevolve("suite " + (dir / "problems").string() + " --budget 2 --threads 2 --min-time 0.02 --shard 0/3 --store " +
                  (dir / "store").string() + " 2>" + (dir / "log4").string() + " >/dev/null",
              st);
  const std::string log4 = test::read_file((dir / "log4").string());
  INFO(log4);
  CHECK(st == 0);
  CHECK(log4.find("kevolve suite: 1_relu: reference baseline measured earlier: ok, ") != std::string::npos);
  CHECK(log4.find("kevolve suite: 1_relu: reference baseline\n") == std::string::npos);
  CHECK(log4.find("kevolve suite: 1_relu: search of 2 evaluations") != std::string::npos);
  run_kevolve("suite " + (dir / "problems").string() + " --budget 3 --shard 2/2 2>&1", st);
  CHECK(st != 0);
  // Usage errors name what was expected.
  fs::create_directories(dir / "empty");
  const std::string empty = run_kevolve("suite " + (dir / "empty").string() + " --budget 2 2>&1", st);
  CHECK(st == 2);
  CHECK(empty.find("no .py problems in " + (dir / "empty").string() +
                   " (expected files defining Model, get_inputs and get_init_inputs)") != std::string::npos);
  run_kevolve("suite " + (dir / "problems").string() + " --budget 2 --candidates " + (dir / "empty").string() + " 2>&1",
              st);
  CHECK(st != 0);  // --budget searches; --candidates evaluates given files: one or the other
  fs::remove_all(dir);
}

TEST_CASE("kevolve run searches a KernelBench-format problem offline with framework-level rewrites", "[python][run]") {
  if (no_torch_python()) return;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-pyrun-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "run.toml") << "[search]\nproblem = \"" << test::source_path(kRelu)
                                  << "\"\nid = \"kb-relu\"\nbackend = \"cpu\"\n"
                                  << "max_in_flight = 2\nretime_top = 1\n[budget]\nevaluations = 3\n[store]\npath = \""
                                  << (dir / "store").string() << "\"\n[eval]\nthreads = 2\nmin_time = 0.02\n";
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve run " + (dir / "run.toml").string() + " --out " +
                          (dir / "out").string() + " 2>&1";
  const auto [st, out] = test::shell(cmd);
  INFO(out);
  REQUIRE(st == 0);
  CHECK(out.find("python backend") != std::string::npos);
  CHECK(out.find("3 evaluated") != std::string::npos);
  CHECK(out.find("kevolve: 1_relu: family pointwise (traced by") != std::string::npos);  // the family it found
  REQUIRE(fs::exists(dir / "out" / "best" / "model_new.py"));
  const std::string best = test::read_file((dir / "out" / "best" / "model_new.py").string());
  CHECK(best.find("class ModelNew(_KevolveBase)") != std::string::npos);  // a rewrite of the problem's module
  CHECK(best.find("class Model(") == std::string::npos);                  // which never names the reference
  fs::remove_all(dir);
}

TEST_CASE("the reference's torch.compile timing is kept per problem file, device and torch, and reused", "[python]") {
  // torch 1.13 (CI) has no torch.compile, so the cache is checked through the evaluator's own functions.
  const fs::path dir = fs::temp_directory_path() / ("kevolve-compile-cache-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path problem = dir / "p.py", cache = dir / "cache" / "baselines.json", script = dir / "check.py";
  std::ofstream(problem) << "# v1\n";
  std::ofstream(script) << "import sys, types, torch\nsys.path.insert(0, sys.argv[1])\nimport kevolve_py_eval as e\n"
                           "a = types.SimpleNamespace(problem=sys.argv[2], threads=2, seed=1, min_reps=10)\n"
                           "k1 = e.compile_cache_key(a, torch.device('cpu'))\n"
                           "assert e.compile_cache_get(sys.argv[3], k1) is None\n"
                           "e.compile_cache_put(sys.argv[3], k1, {'median_ms': 1.5, 'measured': 'then'})\n"
                           "got = e.compile_cache_get(sys.argv[3], k1)\n"
                           "assert got['median_ms'] == 1.5 and got['cached'] is True, got\n"
                           "open(sys.argv[2], 'w').write('# v2\\n')\n"
                           "k2 = e.compile_cache_key(a, torch.device('cpu'))\n"
                           "assert k2 != k1 and e.compile_cache_get(sys.argv[3], k2) is None\n"
                           "a.threads = 1\n"
                           "assert e.compile_cache_key(a, torch.device('cpu')) != k2\n"
                           "print('cache ok')\n";
  const std::string cmd = "/usr/bin/python3 " + script.string() + " " + std::string(KEVOLVE_SOURCE_DIR) +
                          "/backends/python " + problem.string() + " " + cache.string() + " 2>&1";
  const std::string out = test::shell(cmd).out;
  INFO(out);
  CHECK(out.find("cache ok") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "a long float32 sum accumulated in float64 is correct under the eager-relative tolerance, a bfloat16 one is not",
    "[python]") {
  if (no_torch_python()) return;
  const std::string problem = "tests/fixtures/kernelbench/long_sum.py";
  const std::string honest = "tests/backends/python/honest/long_sum__float64_accumulate.py";
  const std::string cheater = "tests/backends/python/cheaters/long_sum__bfloat16.py";
  // Eager float32 is about 3e-3 off the exact sum (30x atol); the float64 sum is within half an ulp of it.
  const EvalResult r = eval_py(problem, honest);
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
  CHECK(r.status == EvalStatus::ok);
  CHECK(r.message.find("tolerance: eager-relative (float64 reference)") != std::string::npos);
  CHECK(r.max_abs_err < 1e-6);  // against the float64 reference
  // The same candidate under the fixed rule (|got - eager| <= atol + rtol*|eager|): refused.
  const std::string cmd =
      python::torch_python() + " " + std::string(KEVOLVE_SOURCE_DIR) +
      "/backends/python/kevolve_py_eval.py --json --problem " + test::source_path(problem) + " --candidate " +
      test::source_path(honest) +
      " --threads 2 --min-time 0.02 --min-reps 5 --max-reps 40 --timeout 5 --tolerance fixed 2>/dev/null";
  const std::string out = test::shell(cmd).out;
  INFO(out);
  CHECK(out.find("\"status\": \"incorrect\"") != std::string::npos);
  CHECK(out.find("\"tolerance\": \"fixed\"") != std::string::npos);
  // bfloat16: the static check refuses it; with the static check off, the tolerance does (error ~26 vs eager's ~3e-3).
  EvalOptions o = quick_py();
  const EvalResult c = eval_py(problem, cheater, o);
  CHECK(c.status == EvalStatus::rejected);
  CHECK(c.reason == "precision");
  o.detectors.set(Detector::isolation, false);
  const EvalResult d = eval_py(problem, cheater, o);
  INFO(d.message);
  CHECK(d.status == EvalStatus::incorrect);
  CHECK(d.reason == "mismatch");
  CHECK(d.message.find("float64 reference") != std::string::npos);
}
