// kevolve-cpu-eval: the trusted CPU evaluator worker (the only process that links libtorch).
// Reads EvalRequest frames on stdin, answers EvalResult frames on stdout (runtime/core/wire.hpp), until EOF.
// Started by `kevolve eval` (and by device actors); each candidate runs in its own kevolve-cpu-runner.
#include "backends/cpu/evaluator/evaluate.hpp"
#include "backends/harness/worker_loop.hpp"

int main(int argc, char**) {
  return kevolve::harness::serve_worker(argc, "kevolve-cpu-eval", "kevolve-cpu-runner", kevolve::cpu::evaluate);
}
