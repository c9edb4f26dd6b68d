// kevolve-cuda-eval: the trusted CUDA evaluator worker (the only process that links libtorch).
// Reads EvalRequest frames on stdin, answers EvalResult frames on stdout (runtime/wire.hpp), until EOF.
// Started by `kevolve eval` (and by device actors); each candidate runs in its own kevolve-cuda-runner.
#include <malloc.h>
#include <cstdlib>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "backends/cuda/evaluator/evaluate.hpp"
#include "runtime/records_codec.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "kevolve-cuda-eval speaks the worker protocol on stdin/stdout; run `kevolve eval` instead\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Generated inputs and reference outputs of the GPU sizes are large: keep more of them between candidates.
  setenv("KEVOLVE_DATA_CACHE_MB", "16384", 0);
  // Keep freed tensor memory in the heap instead of returning it to the kernel after each op, so the
  // reference is not charged page faults a long-running PyTorch process would not pay.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int out = dup(1);  // frames go to the original stdout; anything printed by libraries goes to stderr
  dup2(2, 1);
  const auto runner = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kevolve-cuda-runner").string();
  while (auto frame = kevolve::wire::read_frame(0)) {
    kevolve::EvalRequest q;
    kevolve::EvalResult r;
    try {
      kevolve::wire::Reader rd(*frame);
      kevolve::decode(rd, q);
      r = kevolve::cuda::evaluate(q, runner);
    } catch (const kevolve::wire::DecodeError& e) {
      r.status = kevolve::EvalStatus::harness_error;
      r.reason = "protocol";
      r.message = std::string("malformed request: ") + e.what();
    }
    kevolve::wire::Writer w;
    kevolve::encode(w, r);
    if (!kevolve::wire::write_frame(out, w.bytes())) return 1;
  }
  return 0;
}
