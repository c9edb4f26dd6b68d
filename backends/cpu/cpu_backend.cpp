#include "backends/cpu/cpu_backend.hpp"

#include "backends/cpu/build/compiler.hpp"
#include "backends/cpu/build/source_scan.hpp"

namespace kevolve::cpu {

CpuBackend::CpuBackend(std::string evaluator) : evaluator_(std::move(evaluator)) {}

EvalResult CpuBackend::evaluate(const ProblemSpec& spec, const Candidate& c, const EvalOptions& o) {
  EvalResult r;
  r.detectors = o.detectors;
  if (c.language != "cpp") {
    r.status = EvalStatus::harness_error;
    r.reason = "language";
    r.message = "the CPU backend builds C++ candidates; this one is '" + c.language + "'";
    return r;
  }
  if (o.detectors.on(Detector::isolation))
    if (auto f = scan_source(c.source)) {
      r.status = EvalStatus::rejected;
      r.reason = "isolation";
      r.message = "line " + std::to_string(f->line) + ": '" + f->construct + "' is not allowed in a kernel (" + f->why + ")";
      return r;
    }
  PrivateDir dir;
  if (!dir.ok()) {
    r.status = EvalStatus::harness_error;
    r.reason = "build";
    r.message = "cannot create a private build folder under $TMPDIR";
    return r;
  }
  BuildResult b = compile_cpu(c, dir.path());
  r.compile_log = b.log;
  if (!b.ok) {
    r.status = EvalStatus::compile_error;
    r.reason = "compiler";
    const auto first = b.log.find("error");
    r.message = first == std::string::npos ? b.log.substr(0, 400) : b.log.substr(first, 400);
    return r;
  }
  if (!started_) {
    std::string err;
    if (!worker_.start(evaluator_, err)) {
      r.status = EvalStatus::harness_error;
      r.reason = "worker";
      r.message = err;
      return r;
    }
    started_ = true;
  }
  EvalRequest q{spec, b.artifact, c.entry, o};
  EvalResult e = worker_.evaluate(q);
  if (e.status == EvalStatus::harness_error && e.reason == "worker") started_ = false;  // restart next time
  e.compile_log = b.log;
  return e;
}

}  // namespace kevolve::cpu
