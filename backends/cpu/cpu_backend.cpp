#include "backends/cpu/cpu_backend.hpp"

#include <unistd.h>

#include "backends/cpu/build/compiler.hpp"
#include "backends/harness/source_scan.hpp"

namespace kevolve::cpu {
namespace {

EvalResult compile_error(const BuildResult& build, const EvalOptions& o) {
  const auto first = build.log.find("error");
  EvalResult r = make_verdict(EvalStatus::compile_error, "compiler",
                              first == std::string::npos ? build.log.substr(0, 400) : build.log.substr(first, 400),
                              o.detectors);
  r.compile_log = build.log;
  r.sandbox = build.sandbox;
  return r;
}

}  // namespace

BuiltCandidate build(const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b = start_build(c, o, "cpp", "CPU", harness::scan_source(c.source));
  if (b.verdict) return b;
  if (o.detectors.on(Detector::isolation)) {
    // The scan again after macro expansion (words assembled by ## appear whole), on a confined g++ -E.
    std::string text;
    const BuildResult pre = preprocess_cpu(c, b.dir, text);
    unlink((b.dir + "/candidate.ii").c_str());
    if (!pre.status.ok()) {
      b.build = pre;
      b.verdict = compile_error(pre, o);
      return b;
    }
    if (auto f = harness::scan_preprocessed_source(text)) {
      b.build = pre;
      b.verdict = isolation_verdict(*f, o.detectors, true);
      b.verdict->sandbox = pre.sandbox;
      return b;
    }
  }
  b.build = compile_cpu(c, b.dir);
  if (!b.build.status.ok()) b.verdict = compile_error(b.build, o);
  return b;
}

CpuBackend::CpuBackend(std::string evaluator) : evaluator_(std::move(evaluator)) {}

EvalResult CpuBackend::evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) {
  if (b.verdict) return *b.verdict;
  EvalResult e = worker_.evaluate_in(evaluator_, EvalRequest{spec, b.build.artifact, b.entry, o});
  e.compile_log = b.build.log;
  if (!b.build.sandbox.empty()) e.sandbox += (e.sandbox.empty() ? "" : "\n") + b.build.sandbox;
  return e;
}

}  // namespace kevolve::cpu
