#include "backends/cpu/build/compiler.hpp"
#include "backends/process/run_captured.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kevolve::cpu {

namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h, embedded at build time
}

BuildResult compile_cpu(const Candidate& c, const std::string& dir, const CompileOptions& o) {
  BuildResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string src = dir + "/candidate.cpp", so = dir + "/candidate.so";
  std::ofstream(dir + "/kevolve_kernel.h") << kKernelHeader;
  std::ofstream(src) << c.source;
  std::vector<std::string> argv{o.compiler};
  argv.insert(argv.end(), o.flags.begin(), o.flags.end());
  for (const std::string& a : {std::string("-I") + dir, src, std::string("-o"), so}) argv.push_back(a);
  const int rc = process::run_captured(argv, o.timeout_s, r.log);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc == -1 && r.log.empty())
    r.log = "the compiler did not finish within " + std::to_string(int(o.timeout_s)) + " s";
  r.ok = rc == 0 && std::filesystem::exists(so);
  if (r.ok) r.artifact = so;
  // Compiler messages name the private temp path; show the candidate's own name instead.
  for (size_t pos; (pos = r.log.find(src)) != std::string::npos;) r.log.replace(pos, src.size(), "candidate.cpp");
  return r;
}

}  // namespace kevolve::cpu
