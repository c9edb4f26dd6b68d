// The CUDA backend on a real GPU: honest kernels (kernel-only and host code) are correct and timed; a
// kernel that faults, one that hangs and one that hides its work on another stream each get the right
// verdict, and the next candidate still runs. Skipped with a printed reason where there is no GPU.
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "knowledge/template_library.hpp"
#include "tests/backends/cuda/cuda_helpers.hpp"

using namespace kevolve;
using kevolve::test::cuda_eval_file;
using kevolve::test::cuda_eval_source;
using kevolve::test::skip_without_gpu;

namespace {
const char* kGelu = "problems/core/gelu/problem.toml";
}

TEST_CASE("honest CUDA kernels are correct and timed against torch", "[cuda][gpu]") {
  if (skip_without_gpu("honest CUDA kernels")) return;
  for (const char* f :
       {"tests/backends/cuda/honest/gelu_kernel_only.cu", "tests/backends/cuda/honest/gelu_host_code.cu"}) {
    INFO(f);
    const EvalResult r = cuda_eval_file(kGelu, f);
    INFO(r.message << "\n" << r.compile_log << "\n" << r.runner_log);
    REQUIRE(r.status == EvalStatus::ok);
    CHECK(r.candidate.median_ms > 0);
    CHECK(r.reference.median_ms > 0);
    CHECK(r.peak_gbps > 0);
    CHECK(r.device.find("sm_") != std::string::npos);
    CHECK(r.profile.find("== SASS (sm_90) ==") != std::string::npos);  // instruction mix from cuobjdump
    CHECK(r.profile.find("REG:") != std::string::npos);                // registers, stack, shared memory
  }
}

TEST_CASE("a kernel that writes out of bounds is a runtime error with the CUDA text, and the next one runs",
          "[cuda][gpu]") {
  if (skip_without_gpu("out-of-bounds kernel")) return;
  const EvalResult r = cuda_eval_file(kGelu, "tests/backends/cuda/crashers/out_of_bounds.cu");
  INFO(r.message);
  CHECK(r.status == EvalStatus::runtime_error);
  CHECK(r.reason == "cuda");
  CHECK(r.message.find("cudaError") != std::string::npos);
  const EvalResult next = cuda_eval_file(kGelu, "tests/backends/cuda/honest/gelu_kernel_only.cu");
  INFO(next.message);
  CHECK(next.status == EvalStatus::ok);
}

TEST_CASE("a kernel that never finishes times out and its runner is killed", "[cuda][gpu]") {
  if (skip_without_gpu("hanging kernel")) return;
  EvalOptions o = test::quick_options();
  o.call_timeout_s = 3;
  const EvalResult r = cuda_eval_file(kGelu, "tests/backends/cuda/crashers/hang.cu", o);
  INFO(r.message);
  CHECK(r.status == EvalStatus::timeout);
  const EvalResult next = cuda_eval_file(kGelu, "tests/backends/cuda/honest/gelu_kernel_only.cu");
  INFO(next.message);
  CHECK(next.status == EvalStatus::ok);
}

TEST_CASE("work hidden on a second stream is refused by the scan after macro expansion, and by escaped_work",
          "[cuda][gpu]") {
  if (skip_without_gpu("second-stream cheater")) return;
  const EvalResult honest = cuda_eval_file(kGelu, "tests/backends/cuda/honest/gelu_kernel_only.cu");
  REQUIRE(honest.status == EvalStatus::ok);
  // Its stream's name is pasted together by the preprocessor: the scan of the preprocessed source sees it.
  const EvalResult scanned = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/second_stream.cu");
  INFO(scanned.message);
  CHECK(scanned.status == EvalStatus::rejected);
  CHECK(scanned.reason == "isolation");
  CHECK(scanned.message.find("after macro expansion") != std::string::npos);
  // The scan is advice: with it off, the evaluator's own check catches the hidden work.
  EvalOptions no_scan = test::quick_options();
  no_scan.detectors.set(Detector::isolation, false);
  const EvalResult r = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/second_stream.cu", no_scan);
  INFO(r.message);
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "escaped_work");
  // With escaped_work off too (and poison and timed_outputs, which a late writer can also trip) the cheater
  // scores ok: every batch ends with a device synchronisation, so its verification reads the finished
  // outputs, and the events measure only its launch. The detector is what catches it.
  EvalOptions off = no_scan;
  off.detectors.set(Detector::escaped_work, false);
  off.detectors.set(Detector::poison, false);
  off.detectors.set(Detector::timed_outputs, false);
  const EvalResult fooled = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/second_stream.cu", off);
  INFO(status_name(fooled.status) << " [" << fooled.reason << "] " << fooled.message);
  CHECK(fooled.status == EvalStatus::ok);
  // It does 64 extra steps per element on top of GELU, yet it is "timed" faster than the honest kernel.
  INFO("honest " << honest.candidate.median_ms << " ms, cheater " << fooled.candidate.median_ms << " ms");
  CHECK(fooled.candidate.median_ms < honest.candidate.median_ms);
}

TEST_CASE("host code cannot reach the evaluator: the runner has a uid of its own in namespaces of its own",
          "[cuda][gpu]") {
  if (skip_without_gpu("isolation of the CUDA runner")) return;
  const EvalResult r = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/reaches_evaluator.cu");
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox);
  // /proc/<evaluator>/mem is out of sight (a /proc of its own, another uid); renicing the evaluator is a
  // forbidden call: the allow-list kills the runner, and the verdict names the isolation breach. (With the
  // evaluator's identity and no filter, either reach would poison the output.)
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "isolation");
  if (geteuid() == 0) {
    CHECK(r.sandbox.find("(its own) without capabilities") != std::string::npos);
    CHECK(r.sandbox.find("seccomp allow-list") != std::string::npos);
    CHECK(r.sandbox.find("read-only root") != std::string::npos);
    // Host memory: the evaluation's cgroup carries the bound (the line names it), else a memory cgroup of the
    // runner's own where the machine delegates one, else RLIMIT_DATA with the reason named.
    CHECK((r.sandbox.find(" MiB, freezer") != std::string::npos || r.sandbox.find("memory cgroup (v") != std::string::npos ||
           r.sandbox.find("no memory cgroup: ") != std::string::npos));
    // Every process of the runner: its evaluation's cgroup, or none with the reason (processes then refused).
    CHECK((r.sandbox.find(", cgroup v") != std::string::npos || r.sandbox.find(", no cgroup (") != std::string::npos));
    WARN("the CUDA runner's sandbox here: " << r.sandbox);
  } else {
    CHECK(r.sandbox.find("same uid") != std::string::npos);  // says it keeps the evaluator's uid
  }
}

// The processes nvidia-smi lists on the GPU, with the device memory each holds (MiB).
static std::map<long, long> gpu_processes() {
  std::map<long, long> out;
  FILE* p = popen("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null", "r");
  if (!p) return out;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    long pid = 0, mib = 0;
    if (std::sscanf(line, "%ld, %ld", &pid, &mib) == 2) out[pid] = mib;
  }
  pclose(p);
  return out;
}

TEST_CASE("a host thread a candidate starts ends with its evaluation together with its kernels and device memory",
          "[cuda][gpu]") {
  if (skip_without_gpu("host threads of a CUDA candidate")) return;
  const char* file = "tests/backends/cuda/cheaters/host_thread_spinner.cu";
  // Its thread and stream are named by token pasting: the scan of the preprocessed source still sees them.
  const EvalResult scanned = cuda_eval_file(kGelu, file);
  INFO(status_name(scanned.status) << " [" << scanned.reason << "] " << scanned.message);
  CHECK(scanned.status == EvalStatus::rejected);
  CHECK(scanned.reason == "isolation");
  // With the scan off it runs: whatever its verdict, once the evaluation has returned its runner process (and
  // so its thread) is gone and the GPU no longer lists it or its 512 MiB.
  EvalOptions off = test::quick_options();
  off.detectors.set(Detector::isolation, false);
  const EvalResult r = cuda_eval_file(kGelu, file, off);
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox
                             << "\nlog: " << r.runner_log);
  const size_t at = r.runner_log.find("host_thread_spinner pid ");
  REQUIRE(at != std::string::npos);
  const long pid = std::stol(r.runner_log.substr(at + 24));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !std::filesystem::exists("/proc/" + std::to_string(pid)) && !gpu_processes().count(pid);
    if (!gone) usleep(100000);
  }
  CHECK(gone);
  WARN("after the evaluation of the host-thread spinner (runner pid " << pid << "): " << gpu_processes().size()
                                                                       << " process(es) on the GPU");
  // The next candidate runs as usual.
  CHECK(cuda_eval_file(kGelu, "tests/backends/cuda/honest/gelu_kernel_only.cu").status == EvalStatus::ok);
}

TEST_CASE("host code that opens a socket is killed by the runner's seccomp allow-list", "[cuda][gpu]") {
  if (skip_without_gpu("seccomp of the CUDA runner")) return;
  // The scan of the preprocessed source refuses the pasted syscall; with the scan off the runner's allow-list
  // is what stops it (the wall, not the advice).
  const EvalResult scanned = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/opens_socket.cu");
  CHECK(scanned.status == EvalStatus::rejected);
  CHECK(scanned.reason == "isolation");
  EvalOptions no_scan = test::quick_options();
  no_scan.detectors.set(Detector::isolation, false);
  const EvalResult r = cuda_eval_file(kGelu, "tests/backends/cuda/cheaters/opens_socket.cu", no_scan);
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\nsandbox: " << r.sandbox
                             << "\nlog: " << r.runner_log);
  if (r.sandbox.find("seccomp allow-list") == std::string::npos) {
    test::say_skipped("no seccomp filter on this machine: " + r.sandbox);
    return;
  }
  CHECK(r.status == EvalStatus::rejected);
  CHECK(r.reason == "isolation");
}

TEST_CASE("timing oracles on the GPU: k passes over the data take k times one pass", "[cuda][gpu][oracle]") {
  if (skip_without_gpu("GPU timing oracles")) return;
  const EvalResult one = cuda_eval_file(kGelu, "tests/backends/cuda/oracles/gelu_passes_1.cu");
  const EvalResult four = cuda_eval_file(kGelu, "tests/backends/cuda/oracles/gelu_passes_4.cu");
  INFO(one.message << " / " << four.message);
  REQUIRE(one.status == EvalStatus::ok);
  REQUIRE(four.status == EvalStatus::ok);
  const double ratio = four.candidate.median_ms / one.candidate.median_ms;
  INFO("1 pass " << one.candidate.median_ms << " ms, 4 passes " << four.candidate.median_ms << " ms: " << ratio);
  CHECK(ratio > 3.0);  // launch overhead and L2 reuse keep it below 4 only a little
  CHECK(ratio < 4.6);
  // The speedup is the reference median over the candidate median, and bandwidth goes with 1 / time.
  for (const EvalResult* r : {&one, &four})
    CHECK(r->speedup == Approx(r->reference.median_ms / r->candidate.median_ms).epsilon(1e-9));
  CHECK(one.candidate_gbps / four.candidate_gbps == Approx(ratio).epsilon(0.02));
}

TEST_CASE("device memory a host-code candidate keeps is counted from its load on and refused over the cap",
          "[cuda][gpu]") {
  if (skip_without_gpu("device memory cap of host code")) return;
  for (const char* f :
       {"tests/backends/cuda/cheaters/keeps_device_memory.cu", "tests/backends/cuda/cheaters/allocates_at_load.cu"}) {
    INFO(f);
    const EvalResult r = cuda_eval_file(kGelu, f);
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
    CHECK(r.status == EvalStatus::runtime_error);
    CHECK(r.message.find("MiB of device memory (the cap is 1024 MiB)") != std::string::npos);
  }
}

// map_id's radix directory (host code: a directory built per call, then a scan of an id's bucket) at the
// verification shapes (7 keys and up) and the bench size, with two and one buckets per key and 1 or 2 ids
// per thread.
TEST_CASE("map_id by a per-call radix directory in host code is correct at the GPU bench size", "[cuda][gpu]") {
  if (skip_without_gpu("map_id directory template")) return;
  auto t = find_template("cuda", "map_id", {test::source_path("knowledge")});
  REQUIRE(t);
  for (const auto& [ipt, prefix] :
       {std::pair<std::string, std::string>{"1", ""}, {"2", "#define KV_DIR_PER_KEY 1\n"}}) {
    Params p = t->defaults();
    p["search"] = "directory";
    p["ipt"] = ipt;
    auto src = t->render(p);
    REQUIRE(src);
    CHECK(src->find("@kevolve") == std::string::npos);  // host code: built by nvcc, no launch lines
    const EvalResult r = cuda_eval_source("problems/core/map_id/problem.toml", prefix + *src);
    INFO("ipt " << ipt << " " << prefix << status_name(r.status) << " [" << r.reason << "] " << r.message << "\n"
                << r.compile_log << "\n"
                << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
  }
}

// The evaluator allocates on the same device between the runner's batches (inputs and reference outputs at
// the bench size: over 1 GiB for map_id); none of it may be counted against the candidate.
TEST_CASE("map_id by a per-call hash table in host code is correct at the GPU bench size", "[cuda][gpu]") {
  if (skip_without_gpu("map_id hash template")) return;
  auto t = find_template("cuda", "map_id", {test::source_path("knowledge")});
  REQUIRE(t);
  // The problem's keys fit the compact layout; the wide one (any int64 keys) is forced by its macro. Each
  // layout with no filter and with 16 filter bits per key (misses answered without a probe).
  for (const std::string filter : {"0", "16"}) {
    Params p = t->defaults();
    p["search"] = "hash";
    p["ipt"] = "2";
    p["filter"] = filter;
    auto src = t->render(p);
    REQUIRE(src);
    CHECK(src->find("@kevolve") == std::string::npos);  // host code: built by nvcc, no launch lines
    for (const std::string prefix : {"", "#define KV_HASH_COMPACT 0\n"}) {
      INFO("filter " << filter << " " << prefix);
      const EvalResult r = cuda_eval_source("problems/core/map_id/problem.toml", prefix + *src);
      INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n"
                                 << r.compile_log << "\n"
                                 << r.runner_log);
      CHECK(r.status == EvalStatus::ok);
    }
  }
}

// merge_bucketized_dense's seed takes a warp per 128 elements and keeps each lane's features' top search levels
// in registers when the grid stride is a multiple of F: two features per lane when F divides 64 (F = 32), four
// otherwise (F = 96, and F = 48 with a tail past the last whole chunk), the general path when no feature stays
// fixed (F = 33), the unpadded staged boundaries when the padded table does not fit shared memory (F = 200)
// and the boundaries read from global memory when even they do not (F = 300). The
// verify shapes are sized so that the evaluator's own grid reaches each path; both element maps run.
TEST_CASE("merge_bucketized_dense's seed is correct on every path its features and grid can take", "[cuda][gpu]") {
  if (skip_without_gpu("merge_bucketized_dense template")) return;
  auto t = find_template("cuda", "merge_bucketized_dense", {test::source_path("knowledge")});
  REQUIRE(t);
  auto src = t->render(t->defaults());
  REQUIRE(src);
  auto spec = load_problem(test::source_path("problems/core/merge_bucketized_dense/problem.toml"));
  REQUIRE(spec);
  spec->verify = {{{"B", 4096}, {"F", 32}}, {{"B", 4096}, {"F", 96}},  {{"B", 11265}, {"F", 48}},
                  {{"B", 3001}, {"F", 33}}, {{"B", 1024}, {"F", 200}}, {{"B", 512}, {"F", 300}}};
  spec->bench_cuda = {{"B", 16384}, {"F", 96}};
  for (const std::string prefix : {"", "#define KV_MBD_MAP 0\n"}) {
    const EvalResult r = test::cuda_eval_spec(*spec, prefix + *src);
    INFO(prefix << status_name(r.status) << " [" << r.reason << "] " << r.message << "\n"
                << r.compile_log << "\n"
                << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
  }
}

// A kernel's shared memory is its static arrays plus the launch's dynamic size: batch_event_truncate's staged
// copy takes 40 KB dynamic beside about 9 KB static, past 48 KB only together, so the launch needs the
// opt-in although its dynamic part alone is under 48 KB. Larger windows and the seed run as well, the seed
// with its look-back over fenced slots (KV_BET_PACKED 0) instead of the packed 128-bit ones, and with its
// chunks taken by an atomic ticket instead of by block index.
TEST_CASE("a kernel whose static and dynamic shared memory pass 48 KB only together launches", "[cuda][gpu]") {
  if (skip_without_gpu("batch_event_truncate staged copy")) return;
  auto t = find_template("cuda", "batch_event_truncate", {test::source_path("knowledge")});
  REQUIRE(t);
  struct Point {
    std::string window, order, prefix;
  };
  for (const Point& pt :
       {Point{"4096", "index", ""}, Point{"8192", "index", ""}, Point{"4096", "index", "#define KV_BET_PACKED 0\n"},
        Point{"8192", "index", "#define KV_BET_PACKED 0\n"}, Point{"8192", "ticket", ""}}) {
    Params p = t->defaults();
    p["stage"] = "async";
    p["batch"] = "1";
    p["window"] = pt.window;
    p["order"] = pt.order;
    auto src = t->render(p);
    REQUIRE(src);
    const EvalResult r = cuda_eval_source("problems/core/batch_event_truncate/problem.toml", pt.prefix + *src);
    INFO("window " << pt.window << ", order " << pt.order << " " << pt.prefix << ": " << status_name(r.status) << " ["
                   << r.reason << "] " << r.message << "\n"
                   << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
  }
}

namespace {

// Kills every kevolve-cuda-runner whose parent is a kevolve-cuda-eval (the worker's standby, between
// evaluations); returns how many. /proc/<pid>/stat: "pid (comm) state ppid ...", comm cut to 15 bytes.
int kill_idle_runners() {
  auto stat_of = [](const std::string& pid, std::string& comm, std::string& ppid) {
    std::ifstream f("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(f, line)) return false;
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) return false;
    comm = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    rest >> state >> ppid;
    return true;
  };
  int killed = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string comm, ppid, parent_comm, grand;
    if (!stat_of(pid, comm, ppid) || comm.rfind("kevolve-cuda-ru", 0) != 0) continue;
    if (!stat_of(ppid, parent_comm, grand) || parent_comm.rfind("kevolve-cuda-ev", 0) != 0) continue;
    if (::kill(std::stoi(pid), SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace

// Between two candidates the worker prepares the next one's runner (process, confinement, device context);
// a prepared runner that died before its candidate came is replaced, never charged to the candidate.
TEST_CASE("the next candidate's runner is prepared in advance and a dead one is replaced", "[cuda][gpu]") {
  if (skip_without_gpu("standby runner")) return;
  const char* honest = "tests/backends/cuda/honest/gelu_kernel_only.cu";
  const EvalResult first = cuda_eval_file(kGelu, honest);
  INFO(first.message << "\n" << first.runner_log);
  REQUIRE(first.status == EvalStatus::ok);
  const EvalResult second = cuda_eval_file(kGelu, "tests/backends/cuda/honest/gelu_host_code.cu");
  INFO(second.message << "\n" << second.runner_log);
  REQUIRE(second.status == EvalStatus::ok);
  CHECK(second.profile.find("(a runner prepared before the candidate came") != std::string::npos);
  // The standby is begun as the verdict leaves; give it the moment it needs to exist, then kill it.
  int killed = 0;
  for (int i = 0; i < 50 && killed == 0; ++i) {
    killed = kill_idle_runners();
    if (killed == 0) usleep(20000);
  }
  CHECK(killed == 1);
  const EvalResult third = cuda_eval_file(kGelu, honest);
  INFO(third.message << "\n" << third.runner_log);
  CHECK(third.status == EvalStatus::ok);
  CHECK(third.profile.find("(a runner started for it") != std::string::npos);
}
