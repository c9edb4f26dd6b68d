#include "runtime/records/backend_kind.hpp"
#include "backends/backend.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/hip/hip_backend.hpp"
#include "backends/python/python_backend.hpp"

namespace kevolve {
namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader
}

const char* kernel_abi_header() { return kKernelHeader; }

const char* candidate_language(const std::string& backend) {
  const char* l = backend_traits(backend).language;
  return *l ? l : "cpp";
}

EvalResult make_verdict(EvalStatus s, std::string reason, std::string message, const DetectorSet& d) {
  EvalResult r;
  r.status = s;
  r.reason = std::move(reason);
  r.message = std::move(message);
  r.detectors = d;
  return r;
}

std::string make_build_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kevolve-build-XXXXXX";
  return mkdtemp(pattern.data()) ? pattern : std::string();
}

BuiltCandidate start_build(const Candidate& c, const EvalOptions& o, const std::string& language,
                           const std::string& backend_words, const std::optional<harness::ScanFinding>& refused) {
  BuiltCandidate b;
  b.entry = c.entry;
  if (c.language != language) {
    b.verdict = make_verdict(EvalStatus::harness_error, "language",
                             "the " + backend_words + " backend builds candidates in '" + language +
                                 "'; this one is in '" + c.language + "'",
                             o.detectors);
    return b;
  }
  if (o.detectors.on(Detector::isolation) && refused) {
    b.verdict = isolation_verdict(*refused, o.detectors);
    return b;
  }
  b.dir = make_build_dir();
  if (b.dir.empty()) {
    b.verdict = make_verdict(EvalStatus::harness_error, "build", "cannot create a private build folder under $TMPDIR",
                             o.detectors);
    return b;
  }
  return b;
}

EvalResult isolation_verdict(const harness::ScanFinding& f, const DetectorSet& d, bool expanded) {
  return make_verdict(EvalStatus::rejected, "isolation",
                      "line " + std::to_string(f.line) + (expanded ? " (after macro expansion)" : "") + ": '" +
                          f.construct + "' is not allowed in a kernel (" + f.why + ")",
                      d);
}

void remove_build_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

EvalResult Backend::evaluate_source(const ProblemSpec& spec, const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b = build_candidate(name(), c, o);
  EvalResult r = evaluate(spec, b, o);
  remove_build_dir(b.dir);
  return r;
}

BuiltCandidate build_candidate(const std::string& backend, const Candidate& c, const EvalOptions& o) {
  switch (parse_backend(backend).value_or(BackendKind::null)) {
    case BackendKind::cuda:
      return cuda::build(c, o);
    case BackendKind::cpu:
      return cpu::build(c, o);
    case BackendKind::hip:
      return hip::build(c, o);
    case BackendKind::python:
    case BackendKind::python_cuda:
      return python::build(c, o);
    case BackendKind::null:
      break;
  }
  BuiltCandidate b;
  b.verdict = make_verdict(
      EvalStatus::harness_error, "backend",
      "no backend named '" + backend + "' builds candidates (expected cpu, cuda, hip, python or python-cuda)",
      o.detectors);
  return b;
}

std::unique_ptr<Backend> make_backend(const std::string& backend, int device_index) {
  switch (parse_backend(backend).value_or(BackendKind::null)) {
    case BackendKind::cpu:
      return std::make_unique<cpu::CpuBackend>();
    case BackendKind::cuda: {
      auto b = std::make_unique<cuda::CudaBackend>();
      b->use_gpu(device_index);
      return b;
    }
    case BackendKind::hip: {
      auto b = std::make_unique<hip::HipBackend>();
      b->use_gpu(device_index);
      return b;
    }
    case BackendKind::python:
      return std::make_unique<python::PythonBackend>("cpu");
    case BackendKind::python_cuda: {
      auto b = std::make_unique<python::PythonBackend>("cuda");
      b->use_gpu(device_index);
      return b;
    }
    case BackendKind::null:
      break;
  }
  return nullptr;
}

std::string backend_unavailable(const std::string& backend) {
  return is_backend(backend, BackendKind::hip) ? hip::unavailable_reason() : std::string();
}

}  // namespace kevolve
