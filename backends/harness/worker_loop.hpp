// The serving loop every evaluator worker (kevolve-cpu-eval, kevolve-cuda-eval) runs: EvalRequest frames
// on stdin, one EvalResult frame per request on stdout, until EOF. Header-only: the standalone CUDA worker
// build has no other library to put it in.
#pragma once
#include <malloc.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "runtime/records/records_codec.hpp"

namespace kevolve::harness {

// The peak of this process's resident memory starts again from what it holds now (Linux: clear_refs 5).
inline void restart_peak_rss() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

// This process's peak resident memory since the last restart_peak_rss (VmHWM), in MiB; 0 when unknown.
inline double peak_rss_mb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024;
}

// `name`: the worker's program name (for the usage message); `runner`: its runner's file name, looked up
// next to the worker; `evaluate` judges one request. Returns the process exit status.
inline int serve_worker(int argc, const char* name, const char* runner,
                        const std::function<EvalResult(const EvalRequest&, const std::string& runner_path)>& evaluate) {
  if (argc > 1) {
    std::fprintf(stderr, "%s speaks the worker protocol on stdin/stdout; run `kevolve eval` instead\n", name);
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Keep freed tensor memory in the heap instead of returning it to the kernel after each op, so the
  // reference is not charged page faults a long-running PyTorch process would not pay.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int out = dup(1);  // frames go to the original stdout; anything printed by libraries goes to stderr
  dup2(2, 1);
  const auto runner_path = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / runner).string();
  while (auto frame = wire::read_frame(0)) {
    EvalRequest q;
    EvalResult r;
    try {
      wire::Reader rd(*frame);
      decode(rd, q);
      restart_peak_rss();
      r = evaluate(q, runner_path);
      r.evaluator_peak_rss_mb = peak_rss_mb();
    } catch (const wire::DecodeError& e) {
      r.status = EvalStatus::harness_error;
      r.reason = "protocol";
      r.message = std::string("malformed request: ") + e.what();
    }
    wire::Writer w;
    encode(w, r);
    if (!wire::write_frame(out, w.bytes())) return 1;
  }
  return 0;
}

}  // namespace kevolve::harness
