#include "backends/cpu/cpu_backend.hpp"

#include "backends/cpu/build/compiler.hpp"
#include "backends/harness/source_scan.hpp"

namespace kevolve::cpu {

BuiltCandidate build(const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b;
  if (!start_build(c, o, "cpp", "CPU", harness::scan_source(c.source), b)) return b;
  b.build = compile_cpu(c, b.dir);
  if (!b.build.ok) {
    const auto first = b.build.log.find("error");
    EvalResult r = make_verdict(
        EvalStatus::compile_error, "compiler",
        first == std::string::npos ? b.build.log.substr(0, 400) : b.build.log.substr(first, 400), o.detectors);
    r.compile_log = b.build.log;
    b.verdict = r;
  }
  return b;
}

CpuBackend::CpuBackend(std::string evaluator) : evaluator_(std::move(evaluator)) {}

EvalResult CpuBackend::evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) {
  if (b.verdict) return *b.verdict;
  EvalResult e = worker_.evaluate_in(evaluator_, EvalRequest{spec, b.build.artifact, b.entry, o});
  e.compile_log = b.build.log;
  return e;
}

}  // namespace kevolve::cpu
