#include "backends/build_target.hpp"

#include <cstdlib>
#include <sstream>

#include "backends/process/run_captured.hpp"
#include "backends/device_info.hpp"

namespace kevolve {
namespace {

// gcc's resolution of -march=native on this machine (e.g. "znver3", "sapphirerapids"), asked once.
const std::string& native_march() {
  static const std::string m = [] {
    std::string out;
    if (process::run_captured({"g++", "-march=native", "-Q", "--help=target"}, 60, out) != 0)
      return std::string("unknown");
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      const auto at = line.find("-march=");
      if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
      std::istringstream value(line.substr(at + 7));
      std::string v;
      value >> v;
      if (!v.empty()) return v;
    }
    return std::string("unknown");
  }();
  return m;
}

}  // namespace

std::string build_target(const std::string& backend, const EvalOptions& o) {
  if (const char* t = std::getenv("KEVOLVE_BUILD_TARGET"); t && *t) return t;
  if (backend == "cpu") return "cpu:" + native_march();
  if (backend == "cuda") return "cuda:" + o.arch;
  if (backend == "hip") return "hip:" + hip_target(o.arch);
  return backend;
}

std::string hip_target(const std::string& arch) { return arch.rfind("gfx", 0) == 0 ? arch : "gfx90a"; }

std::string device_target(const std::string& backend, int index) {
  if (const char* t = std::getenv("KEVOLVE_BUILD_TARGET"); t && *t) return t;
  if (backend == "cuda") {
    const std::string cap = nvidia_smi_query("compute_cap", index);  // "9.0" -> "sm_90"
    const auto dot = cap.find('.');
    if (dot == std::string::npos) return "cuda:unknown";
    return "cuda:sm_" + cap.substr(0, dot) + cap.substr(dot + 1);
  }
  if (backend == "hip") {
    const auto gpus = amd_gpu_agents();
    if (index < 0 || index >= static_cast<int>(gpus.size()) || gpus[index].name.empty()) return "hip:unknown";
    // "gfx90a:sramecc+:xnack-" builds as gfx90a: the feature flags are the compiler's defaults.
    return "hip:" + gpus[index].name.substr(0, gpus[index].name.find(':'));
  }
  return build_target(backend, EvalOptions{});
}

}  // namespace kevolve
