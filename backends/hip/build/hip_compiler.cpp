#include "backends/hip/build/hip_compiler.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/build_target.hpp"
#include "backends/harness/launch_spec.hpp"
#include "backends/hip/code_object.hpp"
#include "backends/process/confined_build.hpp"

namespace kevolve::hip {
namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h
#include "kevolve_gpu_portable.inc"   // kPortableHeader: knowledge/templates/hip/kevolve_gpu_portable.h

namespace fs = std::filesystem;

// Writes the candidate and the two headers it may include into `dir`; the candidate's path.
std::string write_sources(const std::string& source, const std::string& dir) {
  std::ofstream(dir + "/kevolve_kernel.h") << kKernelHeader;
  std::ofstream(dir + "/kevolve_gpu_portable.h") << kPortableHeader;
  std::ofstream(dir + "/candidate.hip") << source;
  return dir + "/candidate.hip";
}

// Success when hipcc ran and exited 0; else why not, in words.
Status hipcc_status(const process::ConfinedResult& run, double timeout_s) {
  if (!run.started) return Status::failure(Errc::unavailable, "the build sandbox could not be made");
  if (run.timed_out)
    return Status::failure(Errc::timeout, "hipcc did not finish within " + std::to_string(int(timeout_s)) + " s");
  if (run.exit_code < 0) return Status::failure(Errc::failed, "hipcc was killed");
  if (run.exit_code != 0)
    return Status::failure(Errc::failed, "hipcc exited with code " + std::to_string(run.exit_code));
  return Status::success();
}

}  // namespace

std::string hipcc_path() {
  if (const char* p = std::getenv("KEVOLVE_HIPCC"); p && *p) return fs::exists(p) ? p : "";
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty() && fs::exists(fs::path(d) / "hipcc")) return (fs::path(d) / "hipcc").string();
  }
  return "";
}

Expected<GpuResources> read_resources(const std::string& path, const std::string& kernel) {
  using E = Expected<GpuResources>;
  std::ifstream in(path, std::ios::binary);
  if (!in) return E::failure(Errc::io, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto ks = read_code_object(ss.str());
  if (!ks) return E::failure(ks.status());
  for (auto& k : *ks)
    if (kernel.empty() || k.kernel == kernel) return k;
  return E::failure(Errc::not_found, path + ": no kernel named '" + kernel + "' in the code object");
}

BuildResult preprocess_hip(const std::string& source, const std::string& dir, const std::string& arch,
                           std::string& text, double timeout_s) {
  BuildResult r;
  text.clear();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = write_sources(source, dir), out = dir + "/candidate.ii", hipcc = hipcc_path();
  if (hipcc.empty()) {
    r.log = "hipcc is not installed here\n";
    r.status = Status::failure(Errc::unavailable, "hipcc is not installed here");
    return r;
  }
  process::ConfinedBuild cb;
  cb.argv = {hipcc, "--cuda-device-only", "-E", "--offload-arch=" + hip_target(arch), "-O3", "-std=c++17",
             "-I" + dir, src, "-o", out};
  cb.dir = dir;
  cb.timeout_s = timeout_s;
  cb.read_only = {hipcc};
  const process::ConfinedResult run = process::run_confined(cb);
  r.log = run.output;
  r.sandbox = run.sandbox;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.hip");
  r.status = hipcc_status(run, timeout_s);
  if (!r.status.ok()) return r;
  auto read = process::read_build_file(out, size_t{64} << 20);  // an honest kernel's is a few MiB
  if (!read) {
    r.status = Status::failure(Errc::failed, "the preprocessor left no regular file");
    return r;
  }
  text = std::move(*read);
  return r;
}

HipBuild compile_hip(const std::string& source, const std::string& dir, const std::string& arch, double timeout_s) {
  HipBuild h;
  BuildResult& r = h.build;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string target = hip_target(arch), src = write_sources(source, dir), artifact = dir + "/candidate.hsaco";
  auto l = parse_launch_spec(source);
  if (!has_launch_spec(source) || !l) {
    r.log =
        "launch description: " +
        (l ? std::string("none (a HIP candidate is kernel-only: `// @kevolve kernel/grid/block` lines)") : l.error()) +
        "\n";
    r.status = Status::failure(Errc::invalid_argument, "no usable launch description");
    return h;
  }
  const std::string hipcc = hipcc_path();
  if (hipcc.empty()) {
    h.toolchain_missing = true;
    r.log = "hipcc is not installed here (Debian: apt-get install hipcc libamdhip64-dev rocm-device-libs)\n";
    r.status = Status::failure(Errc::unavailable, "hipcc is not installed here");
    return h;
  }
  std::ofstream(artifact + ".launch") << format_launch_spec(*l);
  // hipcc reads candidate text: confined like every build (backends/process/confined_build.hpp).
  process::ConfinedBuild cb;
  cb.argv = {hipcc, "--genco", "--offload-arch=" + target, "--no-gpu-bundle-output", "-O3", "-std=c++17", "-I" + dir,
             src, "-o", artifact};
  cb.dir = dir;
  cb.timeout_s = timeout_s;
  cb.read_only = {hipcc};  // $KEVOLVE_HIPCC may name one outside the toolchain folders
  const process::ConfinedResult run = process::run_confined(cb);
  r.log = run.output;
  r.sandbox = run.sandbox;
  const int rc = run.started ? run.exit_code : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc == -1 && r.log.empty()) r.log = "the compiler did not finish within " + std::to_string(int(timeout_s)) + " s";
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.hip");
  r.status = hipcc_status(run, timeout_s);
  if (r.status.ok() && !process::regular_file(artifact))
    r.status = Status::failure(Errc::failed, "hipcc left no regular file candidate.hsaco");
  if (!r.status.ok()) return h;
  auto res = read_resources(artifact, l->kernel);
  if (!res) {
    r.log += "\nresources: " + res.error() + "\n";
    r.status = Status::failure(res.code(), "resources: " + res.error());
    return h;
  }
  h.resources = *res;
  auto t = target_limits(target);
  // The block and the dynamic LDS are constants in most kernels; a shape-dependent one is checked per
  // shape by the evaluator (a large shape binding makes min(H, c) take its constant side).
  ShapeBinding big;
  for (char c = 'A'; c <= 'Z'; ++c) big[std::string(1, c)] = int64_t{1} << 20;
  if (auto d = resolve_launch(*l, big, 1); d && t)
    apply_launch(h.resources, *t, static_cast<int>(d->block[0] * d->block[1] * d->block[2]), d->smem);
  if (t) h.refusal = refusal(h.resources, *t);
  r.log += "\n== resources (" + target + ") ==\n" + describe(h.resources) + "\n";
  r.status = h.refusal.empty() ? Status::success() : Status::failure(Errc::failed, "refused: " + h.refusal);
  if (r.status.ok()) r.artifact = artifact;
  return h;
}

}  // namespace kevolve::hip
