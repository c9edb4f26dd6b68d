// kevolve-cpu-runner: runs one untrusted CPU candidate in a confined process. Started only by the CPU
// evaluator (backends/cpu/evaluator), never by hand:
//   kevolve-cpu-runner SO ENTRY ARENA_BYTES THREADS MEMORY_MB CPU_SECONDS SANDBOX(0|1)
// with fds 3 (arena memfd), 4 (commands), 5 (replies). Links no libtorch; see runner_protocol.hpp.
#include <climits>
#include <dlfcn.h>
#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "backends/cpu/runner/sandbox.hpp"
#include "backends/cpu/runner_protocol.hpp"
#include "backends/harness/verify.hpp"
#include "backends/kevolve_kernel.h"

using namespace kevolve;
using namespace kevolve::cpu;

namespace {

using Entry = int (*)(const kv_args*);

std::string sandbox_level;  // what drop_identity() put in force, told to the evaluator in the hello

void reply_hello(Status status, int baseline) {
  wire::Writer w;
  encode(w, Hello{std::move(status), baseline, sandbox_level});
  wire::write_frame(kReplyFd, w.bytes());
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

kv_tensor descriptor(char* base, const ArenaTensor& t) {
  kv_tensor d{};
  d.data = base + t.offset;
  d.dtype = t.dtype;
  d.ndim = static_cast<int32_t>(t.shape.size());
  for (size_t i = 0; i < t.shape.size(); ++i) {
    d.shape[i] = t.shape[i];
    d.strides[i] = t.strides[i];
  }
  return d;
}

// Waits (up to 0.5 s) for threads the call started to end, so that their late writes land before the
// outputs are compared with the snapshot taken at return. Threads that stay (a larger OpenMP pool, a
// kernel's own idle pool) become the new baseline, so later calls do not wait for them. Returns how many
// threads beyond the baseline were alive when the call returned (the evaluator's clock tells whether
// they were still working).
int quiesce(int& baseline) {
  const int64_t deadline = now_ns() + 500000000LL;
  int n = count_threads();
  const int at_return = n > baseline ? n - baseline : 0;
  while (n > baseline && now_ns() < deadline) {
    timespec ts{0, 50000};
    nanosleep(&ts, nullptr);
    n = count_threads();
  }
  baseline = std::max(baseline, n);
  return at_return;
}

// Runs the evaluator's batches of calls until the command pipe closes: each call timed, its outputs poisoned
// and snapshotted as the batch's flags ask, the threads it left behind counted. Returns the exit code.
int serve(Entry entry, char* base, int baseline) {
  while (auto frame = wire::read_frame(kCommandFd)) {
    Batch b;
    try {
      wire::Reader r(*frame);
      decode(r, b);
    } catch (const wire::DecodeError& e) {
      std::fprintf(stderr, "runner: bad command: %s\n", e.what());
      return 6;
    }
    if (b.flags & kPoison)
      for (auto& c : b.calls)
        for (auto& o : c.outputs)
          harness::poison_fill(base + o.offset, static_cast<DType>(o.dtype),
                               o.bytes / dtype_size(static_cast<DType>(o.dtype)));
    std::vector<CallOutcome> out(b.calls.size());
    std::vector<kv_tensor> ins, outs;
    for (size_t i = 0; i < b.calls.size(); ++i) {
      const Call& c = b.calls[i];
      ins.clear();
      outs.clear();
      for (auto& t : c.inputs) ins.push_back(descriptor(base, t));
      for (auto& t : c.outputs) outs.push_back(descriptor(base, t));
      kv_args a{ins.data(),      static_cast<int32_t>(ins.size()),      outs.data(), static_cast<int32_t>(outs.size()),
                b.params.data(), static_cast<int32_t>(b.params.size()), nullptr};
      const bool dry = (b.flags & kDry) != 0;
      const int64_t t0 = now_ns();
      const int rc = dry ? 0 : entry(&a);
      const int64_t t1 = now_ns();
      if (b.flags & kSnapshot)
        for (auto& t : c.outputs)  // an output without a snapshot place (a timing set's) takes none
          if (t.snapshot_offset >= 0)
            std::memcpy(base + t.snapshot_offset, base + t.offset, static_cast<size_t>(t.bytes));
      out[i] = CallOutcome{rc, t1 - t0, quiesce(baseline)};
    }
    wire::Writer w;
    encode(w, out);
    if (!wire::write_frame(kReplyFd, w.bytes())) return 0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "kevolve-cpu-runner is started by kevolve-cpu-eval, not by hand\n");
    return 2;
  }
  const std::string so = argv[1], entry_name = argv[2];
  const int64_t arena_bytes = std::stoll(argv[3]);
  const int threads = std::stoi(argv[4]);
  const int64_t memory_mb = std::stoll(argv[5]), cpu_s = std::stoll(argv[6]);
  const bool sandbox = std::string(argv[7]) == "1";

  // The candidate's file is opened while the runner still has the evaluator's identity (its folder is
  // private); the candidate is loaded later through this descriptor, under the runner's own uid.
  const int so_fd = open(so.c_str(), O_RDONLY | O_CLOEXEC);
  if (so_fd < 0) {
    reply_hello(Status::failure(Errc::failed, "cannot open the candidate " + so + ": " + std::strerror(errno)), 0);
    return 4;
  }
  char real[PATH_MAX];
  const std::string so_real = realpath(so.c_str(), real) ? std::string(real) : so;
  if (sandbox) {
    if (auto e = drop_identity(sandbox_level); !e.empty()) {
      reply_hello(Status::failure(Errc::unavailable, "sandbox unavailable on this machine: " + e), 0);
      return 3;
    }
    sandbox_level += ", seccomp allow-list, RLIMIT_AS/DATA/NPROC/CPU/FSIZE";
  }
  if (auto e = apply_process_limits(cpu_s); !e.empty()) {
    reply_hello(Status::failure(Errc::failed, "sandbox: " + e), 0);
    return 3;
  }  // after the uid change, which clears PDEATHSIG
  if (sandbox)
    if (auto e = limit_threads(4096); !e.empty()) {
      reply_hello(Status::failure(Errc::failed, "sandbox: " + e), 0);
      return 3;
    }
  if (getppid() == 1) return 3;  // the evaluator is already gone
  void* arena =
      mmap(nullptr, static_cast<size_t>(arena_bytes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, kArenaFd, 0);
  if (arena == MAP_FAILED) {
    reply_hello(Status::failure(Errc::failed, std::string("mapping the arena: ") + std::strerror(errno)), 0);
    return 3;
  }
  char* base = static_cast<char*>(arena);

  if (sandbox)
    if (auto e = seccomp_stage1(); !e.empty()) {
      reply_hello(Status::failure(Errc::unavailable, "sandbox unavailable on this machine: " + e), 0);
      return 3;
    }
  const std::string load_path = "/proc/self/fd/" + std::to_string(so_fd);
  void* lib = dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    reply_hello(Status::failure(Errc::failed, std::string("cannot load the candidate: ") + dlerror()), 0);
    return 4;
  }
  auto entry = reinterpret_cast<Entry>(dlsym(lib, entry_name.c_str()));
  if (!entry) {
    reply_hello(Status::failure(Errc::failed, "the candidate exports no function '" + entry_name + "'"), 0);
    return 4;
  }
  if (sandbox)
    if (auto e = check_executable_mappings(so_real, so_fd); !e.empty()) {
      reply_hello(Status::failure(Errc::invalid_argument, e), 0);
      return 5;
    }

  // Start the OpenMP pool now so its threads are part of the baseline, not "stray" threads of a call.
  omp_set_num_threads(threads);
#pragma omp parallel
  { asm volatile("" ::: "memory"); }
  int baseline = count_threads();
  if (auto e = limit_memory(memory_mb); !e.empty()) {
    reply_hello(Status::failure(Errc::failed, "sandbox: " + e), 0);
    return 3;
  }
  if (sandbox)
    if (auto e = seccomp_stage2(); !e.empty()) {
      reply_hello(Status::failure(Errc::unavailable, "sandbox unavailable on this machine: " + e), 0);
      return 3;
    }
  reply_hello(Status::success(), baseline);

  return serve(entry, base, baseline);
}
