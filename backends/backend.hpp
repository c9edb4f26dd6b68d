// Backend: one hardware interpreter as the actors see it, in two steps that can run on different actors:
//   build_candidate(): static checks + compilation into a private folder (the compile farm's work)
//   Backend::evaluate(): the backend's trusted evaluator worker verifies and times the build (a device's work)
// Implementations: backends/cpu/cpu_backend (g++ + kevolve-cpu-eval), backends/cuda/cuda_backend
// (NVRTC or nvcc + kevolve-cuda-eval), backends/hip/hip_backend (hipcc + kevolve-hip-eval). No torch and no CAF behind this header.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "backends/harness/source_scan.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"

namespace kevolve {

struct BuiltCandidate {
  BuildResult build;  // artifact inside `dir` when ok
  std::string dir;    // private build folder; remove_build_dir() when done with it
  std::string entry;
  std::optional<EvalResult> verdict;  // set when the build step already decided (rejected, compile_error)
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Evaluates a build in the backend's (long-lived, restarted when it dies) evaluator worker.
  virtual EvalResult evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) = 0;
  // build + evaluate + clean-up.
  EvalResult evaluate_source(const ProblemSpec& spec, const Candidate& c, const EvalOptions& o);
  virtual const char* name() const = 0;
};

// Builds `c` for the named backend (cpu | cuda | hip | python | python-cuda); never throws. The caller owns the folder in the result.
BuiltCandidate build_candidate(const std::string& backend, const Candidate& c, const EvalOptions& o);
// The evaluating side of a backend; nullptr for a name that is not a backend with a worker.
// `device_index`: which of this machine's devices it evaluates on (CUDA: the worker's CUDA_VISIBLE_DEVICES).
std::unique_ptr<Backend> make_backend(const std::string& backend, int device_index = 0);
void remove_build_dir(const std::string& dir);
// The verdict on a source-scan finding: `rejected [isolation]`; `expanded` when it was found after macro
// expansion (in the preprocessor's output).
EvalResult isolation_verdict(const harness::ScanFinding& f, const DetectorSet& d, bool expanded = false);
// Why the named backend cannot evaluate anything on this machine, known before any candidate ("" when it
// may, or when only an evaluation can tell): hip without its worker or without an AMD GPU.
std::string backend_unavailable(const std::string& backend);

// The language of a backend's candidates: cpp (cpu), cuda (cuda), hip (hip), python (python, python-cuda).
const char* candidate_language(const std::string& backend);

// The text of backends/kevolve_kernel.h, the candidate ABI (embedded at build time).
const char* kernel_abi_header();

// Shared by the implementations: a decided result, and a fresh private folder under $TMPDIR ("" on failure).
EvalResult make_verdict(EvalStatus s, std::string reason, std::string message, const DetectorSet& d);
std::string make_build_dir();

// The steps every build step starts with: the candidate is in `language` (`backend_words` names the backend
// in the message), the source scan found nothing (`refused`, consulted only with the isolation detector on),
// and a private build folder exists. The build begun: its entry, and its verdict when one fails, else its dir.
BuiltCandidate start_build(const Candidate& c, const EvalOptions& o, const std::string& language,
                           const std::string& backend_words, const std::optional<harness::ScanFinding>& refused);

}  // namespace kevolve
