#include "backends/hip/hip_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "backends/device_info.hpp"
#include "backends/harness/source_scan.hpp"
#include "backends/hip/build/hip_compiler.hpp"
#include "backends/process/run_captured.hpp"

namespace kevolve::hip {
namespace {

// What a HIP kernel never needs and a cheater would (as for CUDA): streams, events and graphs of its own,
// device resets, the wall clock of the device, host threads and processes, files, the reference.
const std::map<std::string, std::string>& forbidden() {
  static const std::map<std::string, std::string> m = {
      {"hipStreamCreate", "work on a stream of its own (hidden from the timer)"},
      {"hipStreamCreateWithFlags", "work on a stream of its own (hidden from the timer)"},
      {"hipEventElapsedTime", "reading the timer"},
      {"hipGraphLaunch", "replaying work outside the timed launch"},
      {"hipLaunchHostFunc", "host callbacks"},
      {"hipDeviceReset", "tearing down the context"},
      {"hipSetDevice", "choosing another device"},
      {"s_memrealtime", "reading the device clock"},
      {"__builtin_amdgcn_s_memrealtime", "reading the device clock"},
      {"wall_clock64", "reading the device clock"},
      {"globaltimer", "reading the device clock"},
      {"fork", "starting processes"},
      {"system", "running programs"},
      {"popen", "running programs"},
      {"dlopen", "loading code"},
      {"syscall", "raw system calls"},
      {"socket", "network access"},
      {"fopen", "file access"},
      {"pthread_create", "host threads"},
      {"torch", "calling the reference (torch)"},
      {"ATen", "calling the reference (ATen)"},
      {"Python", "calling into Python"},
  };
  return m;
}

}  // namespace

std::string hip_worker_path() {
  if (const char* p = std::getenv("KEVOLVE_HIP_WORKER"); p && *p) return p;
  return sibling_executable("kevolve-hip-eval");
}

std::string unavailable_reason(const std::string& worker) {
  if (!std::filesystem::exists(worker))
    return "HIP not built on this machine (no " + worker +
           ": kevolve was built without the HIP runtime; install hipcc and libamdhip64-dev and build again, or set "
           "KEVOLVE_HIP_WORKER)";
  std::string out;
  const int rc = process::run_captured({"rocminfo"}, 30, out);
  if (rc == 127 || (rc != 0 && out.empty())) return "no AMD GPU (rocminfo is not installed or did not run)";
  if (parse_rocminfo(out).empty()) return "no AMD GPU (rocminfo found none)";
  return "";
}

BuiltCandidate build(const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b = start_build(c, o, "hip", "HIP", harness::scan_tokens(c.source, forbidden()));
  if (b.verdict) return b;
  if (o.detectors.on(Detector::isolation)) {
    // The scan again after macro expansion (CAT(wall_clock, 64) appears whole), on a confined hipcc -E of
    // the device code. Where preprocessing fails, the build below fails the same way and says why.
    std::string text;
    const BuildResult pre = preprocess_hip(c.source, b.dir, o.arch, text);
    std::remove((b.dir + "/candidate.ii").c_str());
    if (pre.status.ok())
      if (auto f = harness::scan_preprocessed(text, forbidden())) {
        b.build = pre;
        b.verdict = isolation_verdict(*f, o.detectors, true);
        b.verdict->sandbox = pre.sandbox;
        return b;
      }
  }
  HipBuild h = compile_hip(c.source, b.dir, o.arch);
  b.build = h.build;
  if (!b.build.status.ok()) {
    const auto first = b.build.log.find("error");
    EvalResult r =
        h.toolchain_missing ? make_verdict(EvalStatus::harness_error, "toolchain", b.build.log, o.detectors)
        : !h.refusal.empty()
            ? make_verdict(EvalStatus::compile_error, "resources", "refused before any run: " + h.refusal, o.detectors)
            : make_verdict(EvalStatus::compile_error, "compiler",
                           first == std::string::npos ? b.build.log.substr(0, 400) : b.build.log.substr(first, 400),
                           o.detectors);
    r.compile_log = b.build.log;
    r.sandbox = b.build.sandbox;
    b.verdict = r;
  }
  return b;
}

HipBackend::HipBackend(std::string evaluator) : evaluator_(std::move(evaluator)) {}

void HipBackend::use_gpu(int index) { worker_.set_env("HIP_VISIBLE_DEVICES", std::to_string(index)); }

EvalResult HipBackend::evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) {
  if (b.verdict) return *b.verdict;
  if (auto why = unavailable_reason(evaluator_); !why.empty()) {
    EvalResult r = make_verdict(EvalStatus::harness_error, "device", why, o.detectors);
    r.compile_log = b.build.log;
    return r;
  }
  EvalResult e = worker_.evaluate_in(evaluator_, EvalRequest{spec, b.build.artifact, b.entry, o});
  e.compile_log = b.build.log;
  if (!b.build.sandbox.empty()) e.sandbox += (e.sandbox.empty() ? "" : "\n") + b.build.sandbox;
  // Static feedback rides with the timing profile: the code object's resource use and occupancy.
  if (const auto at = b.build.log.find("== resources"); at != std::string::npos) e.profile += b.build.log.substr(at);
  return e;
}

}  // namespace kevolve::hip
