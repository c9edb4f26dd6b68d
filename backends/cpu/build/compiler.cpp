#include "backends/cpu/build/compiler.hpp"

#include <chrono>
#include <fstream>
#include <sstream>

namespace kevolve::cpu {

namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h, embedded at build time

// The preprocessed text read back: at most this much (an honest kernel's is a few MiB).
constexpr size_t kMaxPreprocessed = size_t{64} << 20;

// Success when the compiler ran and exited 0; else why not, in words.
Status compiler_status(const process::ConfinedResult& run, double timeout_s) {
  if (!run.started) return Status::failure(Errc::unavailable, "the build sandbox could not be made");
  if (run.timed_out)
    return Status::failure(Errc::timeout, "the compiler did not finish within " + std::to_string(int(timeout_s)) + " s");
  if (run.exit_code < 0) return Status::failure(Errc::failed, "the compiler was killed");
  if (run.exit_code != 0)
    return Status::failure(Errc::failed, "the compiler exited with code " + std::to_string(run.exit_code));
  return Status::success();
}

// One confined g++ run on the candidate in `dir` with `extra` arguments; the candidate's temp path in its
// messages is shown as its own name.
BuildResult run_gcc(const Candidate& c, const std::string& dir, const CompileOptions& o,
                    const std::vector<std::string>& extra) {
  BuildResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = cpu_source_path(dir);
  std::ofstream(dir + "/kevolve_kernel.h") << kKernelHeader;
  std::ofstream(src) << c.source;
  process::ConfinedBuild b;
  b.argv = {o.compiler};
  b.argv.insert(b.argv.end(), o.flags.begin(), o.flags.end());
  b.argv.push_back("-I" + dir);
  b.argv.insert(b.argv.end(), extra.begin(), extra.end());
  b.dir = dir;
  b.timeout_s = o.timeout_s;
  b.limits = o.limits;
  const process::ConfinedResult run = process::run_confined(b);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.log = run.output;
  r.sandbox = run.sandbox;
  if (run.timed_out) r.log += "\nthe compiler did not finish within " + std::to_string(int(o.timeout_s)) + " s\n";
  r.status = compiler_status(run, o.timeout_s);
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.cpp");
  return r;
}

}  // namespace

std::string cpu_source_path(const std::string& dir) { return dir + "/candidate.cpp"; }

BuildResult compile_cpu(const Candidate& c, const std::string& dir, const CompileOptions& o) {
  const std::string so = dir + "/candidate.so";
  BuildResult r = run_gcc(c, dir, o, {cpu_source_path(dir), "-o", so});
  // What the untrusted build left is taken only as a regular file (never a link to elsewhere).
  if (r.status.ok() && !process::regular_file(so))
    r.status = Status::failure(Errc::failed, "the compiler left no regular file candidate.so");
  if (r.status.ok()) r.artifact = so;
  return r;
}

BuildResult preprocess_cpu(const Candidate& c, const std::string& dir, std::string& text, const CompileOptions& o) {
  const std::string out = dir + "/candidate.ii";
  BuildResult r = run_gcc(c, dir, o, {"-E", cpu_source_path(dir), "-o", out});
  text.clear();
  if (!r.status.ok()) return r;
  auto read = process::read_build_file(out, kMaxPreprocessed);
  if (!read) {
    r.status = Status::failure(Errc::failed, "the preprocessor left no regular file");
    r.log += "\nthe preprocessor left no regular file\n";
    return r;
  }
  text = std::move(*read);
  return r;
}

}  // namespace kevolve::cpu
