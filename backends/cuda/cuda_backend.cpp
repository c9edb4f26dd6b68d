#include "backends/cuda/cuda_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "backends/device_info.hpp"
#include "backends/harness/source_scan.hpp"
#include "backends/cuda/build/cuda_compiler.hpp"
#include "backends/cuda/launch_spec.hpp"

namespace kevolve::cuda {
namespace {

// What a CUDA kernel never needs and a cheater would: its own streams, events or graphs (work hidden from
// the timed stream), device-wide synchronisation, host threads and processes, files, the reference.
const std::map<std::string, std::string>& forbidden() {
  static const std::map<std::string, std::string> m = {
      {"cudaStreamCreate", "work on a stream of its own (hidden from the timer)"},
      {"cudaStreamCreateWithFlags", "work on a stream of its own (hidden from the timer)"},
      {"cudaStreamCreateWithPriority", "work on a stream of its own (hidden from the timer)"},
      {"cuStreamCreate", "work on a stream of its own (hidden from the timer)"},
      {"cudaStreamPerThread", "work on another stream (hidden from the timer)"},
      {"cudaStreamLegacy", "work on another stream (hidden from the timer)"},
      {"cudaEventElapsedTime", "reading the timer"},
      {"cudaGraphLaunch", "replaying work outside the timed launch"},
      {"cudaLaunchHostFunc", "host callbacks"},
      {"cudaDeviceReset", "tearing down the context"},
      {"cudaSetDevice", "choosing another device"},
      {"globaltimer", "reading the device clock"},
      {"fork", "starting processes"},
      {"vfork", "starting processes"},
      {"system", "running programs"},
      {"popen", "running programs"},
      {"execve", "running programs"},
      {"execvp", "running programs"},
      {"dlopen", "loading code"},
      {"dlsym", "looking up foreign code"},
      {"syscall", "raw system calls"},
      {"socket", "network access"},
      {"fopen", "file access"},
      {"thread", "host threads"},
      {"pthread_create", "host threads"},
      {"mprotect", "changing memory protection"},
      {"torch", "calling the reference (torch)"},
      {"ATen", "calling the reference (ATen)"},
      {"c10", "calling the reference (c10)"},
      {"Python", "calling into Python"},
  };
  return m;
}

}  // namespace

std::string cuda_worker_path() {
  if (const char* p = std::getenv("KEVOLVE_CUDA_WORKER"); p && *p) return p;
  return sibling_executable("kevolve-cuda-eval");
}

BuiltCandidate build(const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b = start_build(c, o, "cuda", "CUDA", harness::scan_tokens(c.source, forbidden()));
  if (b.verdict) return b;
  auto failed = [&](const BuildResult& build) {
    const bool missing = build.log.find("not available on this machine") != std::string::npos ||
                         build.log.find("nvcc is not installed") != std::string::npos;
    const auto first = build.log.find("error");
    EvalResult r = make_verdict(
        missing ? EvalStatus::harness_error : EvalStatus::compile_error, missing ? "toolchain" : "compiler",
        first == std::string::npos ? build.log.substr(0, 400) : build.log.substr(first, 400), o.detectors);
    r.compile_log = build.log;
    r.sandbox = build.sandbox;
    return r;
  };
  if (o.detectors.on(Detector::isolation)) {
    // The scan again after macro expansion (CAT(cudaStream, CreateWithFlags) appears whole), on a confined
    // nvcc -E. A host-code candidate is built by nvcc, so its preprocessing must succeed; a kernel-only one
    // is built by NVRTC (whose headers nvcc may lack, and which may be all that is installed), and its
    // device code cannot call the host APIs the scan is about: there the pass is taken where it runs.
    const bool host_code = !has_launch_spec(c.source);
    std::string text;
    const BuildResult pre = preprocess_cuda(c, b.dir, o.arch, text);
    std::remove((b.dir + "/candidate.ii").c_str());
    if (!pre.status.ok() && host_code) {
      BuildResult shown = pre;
      if (shown.log.find("cannot run") != std::string::npos)
        shown.log = "nvcc is not installed here (host-code CUDA candidates need it; kernel-only candidates need "
                    "only NVRTC)\n" + shown.log;
      b.build = shown;
      b.verdict = failed(shown);
      return b;
    }
    if (pre.status.ok())
      if (auto f = harness::scan_preprocessed(text, forbidden())) {
        b.build = pre;
        b.verdict = isolation_verdict(*f, o.detectors, true);
        b.verdict->sandbox = pre.sandbox;
        return b;
      }
  }
  b.build = compile_cuda(c, b.dir, o.arch);
  if (!b.build.status.ok()) b.verdict = failed(b.build);
  return b;
}

CudaBackend::CudaBackend(std::string evaluator) : evaluator_(std::move(evaluator)) {}

void CudaBackend::use_gpu(int index) { worker_.set_env("CUDA_VISIBLE_DEVICES", cuda_visible_device(index)); }

EvalResult CudaBackend::evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) {
  if (b.verdict) return *b.verdict;
  if (!std::filesystem::exists(evaluator_))
    return make_verdict(EvalStatus::harness_error, "worker",
                        "the CUDA worker " + evaluator_ +
                            " is not installed: build it on the GPU node with tools/build_cuda_worker.sh "
                            "(against that node's libtorch) and put it next to kevolve, or set KEVOLVE_CUDA_WORKER",
                        o.detectors);
  EvalResult e = worker_.evaluate_in(evaluator_, EvalRequest{spec, b.build.artifact, b.entry, o});
  e.compile_log = b.build.log;
  if (!b.build.sandbox.empty()) e.sandbox += (e.sandbox.empty() ? "" : "\n") + b.build.sandbox;
  // Profile feedback: the compiler's resource report and the SASS mix ride with the timing profile.
  const auto ptxas = b.build.log.find("ptxas info");
  const auto sass = b.build.log.find("== SASS");
  if (ptxas != std::string::npos)
    e.profile +=
        "compiler:\n" + b.build.log.substr(ptxas, sass == std::string::npos ? std::string::npos : sass - ptxas);
  if (sass != std::string::npos) e.profile += b.build.log.substr(sass);
  return e;
}

}  // namespace kevolve::cuda
