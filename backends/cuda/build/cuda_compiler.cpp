#include "backends/cuda/build/cuda_compiler.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/process/confined_build.hpp"
#include "backends/cuda/launch_spec.hpp"
#include "backends/worker_client.hpp"

namespace kevolve::cuda {
namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h

namespace fs = std::filesystem;

// A CUDA tool: $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH.
std::string cuda_tool(const std::string& name) {
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(env))
      if (fs::exists(fs::path(h) / "bin" / name)) return (fs::path(h) / "bin" / name).string();
  if (fs::exists("/usr/local/cuda/bin/" + name)) return "/usr/local/cuda/bin/" + name;
  return name;
}

// One confined run of a CUDA tool in `dir`; its output into `log`, its confinement into `sandbox`.
// The exit status, -1 when it timed out, died by a signal or could not start.
int run_tool(const std::vector<std::string>& argv, const std::string& dir, double timeout_s, std::string& log,
             std::string* sandbox = nullptr, size_t max_output = 64 << 10) {
  process::ConfinedBuild b;
  b.argv = argv;
  b.dir = dir;
  b.timeout_s = timeout_s;
  b.limits.diagnostics_bytes = max_output;
  // A tool outside the toolchain folders (kevolve's own NVRTC helper) is shown read-only, alone.
  if (!argv.empty() && argv[0].find('/') != std::string::npos) b.read_only.push_back(argv[0]);
  const process::ConfinedResult run = process::run_confined(b);
  log += run.output;
  if (sandbox) *sandbox = run.sandbox;
  return run.started ? run.exit_code : -1;
}

// The nvcc options of a host-code build for `arch` (sm_XY).
std::vector<std::string> nvcc_options(const std::string& arch, const std::string& dir) {
  const std::string code = arch.substr(3);
  return {"-O3",     "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-cudart", "static",
          "-gencode=arch=compute_" + code + ",code=sm_" + code, "-Xptxas", "-v", "-I" + dir};
}

// Success for exit status 0 of `tool` (run_tool's `rc`); else why it failed, in words.
Status tool_status(const std::string& tool, int rc, double timeout_s) {
  if (rc == 0) return Status::success();
  if (rc == -1)
    return Status::failure(Errc::failed, tool + " did not finish within " + std::to_string(int(timeout_s)) +
                                             " s, was killed or could not start");
  if (rc == 127) return Status::failure(Errc::unavailable, tool + " is not installed here");
  return Status::failure(Errc::failed, tool + " exited with code " + std::to_string(rc));
}

void write_sources(const Candidate& c, const std::string& dir) {
  std::ofstream(dir + "/kevolve_kernel.h") << kKernelHeader;
  std::ofstream(cuda_source_path(dir)) << c.source;
}

}  // namespace

std::string cuda_source_path(const std::string& dir) { return dir + "/candidate.cu"; }

BuildResult preprocess_cuda(const Candidate& c, const std::string& dir, const std::string& arch, std::string& text,
                            double timeout_s) {
  BuildResult r;
  text.clear();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = cuda_source_path(dir), out = dir + "/candidate.ii";
  write_sources(c, dir);
  std::vector<std::string> argv{cuda_tool("nvcc"), "-E"};
  for (auto& o : nvcc_options(arch, dir)) argv.push_back(o);
  for (const std::string& a : {src, std::string("-o"), out}) argv.push_back(a);
  const int rc = run_tool(argv, dir, timeout_s, r.log, &r.sandbox);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.cu");
  r.status = tool_status("nvcc -E", rc, timeout_s);
  if (!r.status.ok()) return r;
  auto read = process::read_build_file(out, size_t{64} << 20);  // an honest kernel's is a few MiB
  if (!read) {
    r.status = Status::failure(Errc::failed, "the preprocessor left no regular file");
    return r;
  }
  text = std::move(*read);
  return r;
}

BuildResult compile_cuda(const Candidate& c, const std::string& dir, const std::string& arch, double timeout_s) {
  BuildResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = cuda_source_path(dir);
  write_sources(c, dir);
  std::string artifact, tool = "nvcc";
  int rc = 0;
  if (has_launch_spec(c.source)) {
    auto l = parse_launch_spec(c.source);
    if (!l) {
      r.log = "launch description: " + l.error() + "\n";
      r.status = Status::failure(Errc::invalid_argument, "launch description: " + l.error());
      return r;
    }
    artifact = dir + "/candidate.cubin";
    tool = "kevolve-nvrtc";
    std::ofstream(artifact + ".launch") << format_launch_spec(*l);
    rc = run_tool({sibling_executable("kevolve-nvrtc"), "--arch", arch, "--out", artifact, src}, dir, timeout_s, r.log,
                  &r.sandbox);
  } else {
    artifact = dir + "/candidate.so";
    std::vector<std::string> argv{cuda_tool("nvcc")};
    for (auto& o : nvcc_options(arch, dir)) argv.push_back(o);
    for (const std::string& a : {src, std::string("-o"), artifact}) argv.push_back(a);
    rc = run_tool(argv, dir, timeout_s, r.log, &r.sandbox);
    if (rc == 127 ||
        (rc != 0 && r.log.find("No such file") != std::string::npos && r.log.find("nvcc") != std::string::npos))
      r.log =
          "nvcc is not installed here (host-code CUDA candidates need it; kernel-only candidates need only NVRTC)\n" +
          r.log;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc == -1 && r.log.empty()) r.log = "the compiler did not finish within " + std::to_string(int(timeout_s)) + " s";
  // What the untrusted build left is taken only as a regular file (never a link to elsewhere).
  r.status = tool_status(tool, rc, timeout_s);
  if (r.status.ok() && !process::regular_file(artifact))
    r.status = Status::failure(Errc::failed, tool + " left no regular file " + fs::path(artifact).filename().string());
  if (r.status.ok()) {
    r.artifact = artifact;
    r.log += "\n== SASS (" + arch + ") ==\n" + sass_profile(artifact);
  }
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.cu");
  return r;
}

std::string sass_profile(const std::string& artifact) {
  // cuobjdump parses what the untrusted build wrote: confined as well (its listing is parsed, not shown,
  // so it may be long).
  std::string out;
  const std::string dir = fs::path(artifact).parent_path().string();
  const int rc = run_tool({cuda_tool("cuobjdump"), "-sass", artifact}, dir, 60, out, nullptr, size_t{64} << 20);
  if (rc != 0) return "unavailable (cuobjdump " + std::string(rc == 127 ? "is not installed" : "failed") + ")\n";
  std::map<std::string, long> count;
  long total = 0;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const auto c = line.find("*/");
    if (line.find("/*") == std::string::npos || c == std::string::npos) continue;
    std::istringstream ops(line.substr(c + 2));
    std::string op;
    ops >> op;
    if (op.empty() || op[0] == '{' || op == "}") continue;
    if (op[0] == '@') ops >> op;  // predicated instruction
    if (op.empty() || !std::isupper(static_cast<unsigned char>(op[0]))) continue;
    ++total;
    const std::string base = op.substr(0, op.find('.'));
    if (base == "LDG" || base == "STG" || base == "LDS" || base == "STS") {
      std::string width = "32";
      for (const char* w : {".128", ".64", ".U16", ".U8", ".S16", ".S8"})
        if (op.find(w) != std::string::npos) width = std::string(w).substr(1);
      ++count[base + "." + width];
    } else if (base == "LDL" || base == "STL" || base == "SHFL" || base == "BAR" || base == "MUFU" || base == "ATOMG" ||
               base == "RED" || base == "FFMA" || base == "HFMA2") {
      ++count[base];
    }
  }
  std::ostringstream s;
  std::string res;
  if (run_tool({cuda_tool("cuobjdump"), "-res-usage", artifact}, dir, 60, res, nullptr, size_t{4} << 20) == 0) {
    std::istringstream rs(res);
    std::string fn;
    while (std::getline(rs, line)) {
      if (const auto f = line.find("Function "); f != std::string::npos) fn = line.substr(f + 9);
      if (const auto r = line.find("REG:"); r != std::string::npos)
        s << "resources " << fn << " " << line.substr(r) << "\n";
    }
  }
  s << "instructions " << total;
  for (auto& [k, v] : count) s << ", " << k << " " << v;
  const bool local = count.count("LDL") || count.count("STL");
  s << "\nlocal memory: " << (local ? "YES (register spills or a dynamically indexed array)" : "none") << "\n";
  return s.str();
}

}  // namespace kevolve::cuda
