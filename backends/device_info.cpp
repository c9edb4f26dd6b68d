#include "runtime/records/backend_kind.hpp"
#include "backends/device_info.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/build_target.hpp"
#include "backends/process/run_captured.hpp"

namespace kevolve {
namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

std::string cuda_visible_device(int index) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) return std::to_string(index);
  std::string list = visible;
  for (int i = 0; i <= index; ++i) {
    const size_t comma = list.find(',');
    const std::string entry = list.substr(0, comma);
    if (i == index) {
      const size_t a = entry.find_first_not_of(' '), z = entry.find_last_not_of(' ');
      if (a == std::string::npos) return std::to_string(index);
      const std::string name = entry.substr(a, z - a + 1);
      // Indices, UUIDs and MIG names only: anything else stands for the plain index.
      return name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/:.") ==
                     std::string::npos
                 ? name
                 : std::to_string(index);
    }
    if (comma == std::string::npos) break;
    list.erase(0, comma + 1);
  }
  return std::to_string(index);
}

std::string nvidia_smi_query(const std::string& query, int index) {
  std::string out;
  if (process::run_captured(
          {"nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader,nounits", "-i", cuda_visible_device(index)}, 30,
          out) != 0)
    return "";
  std::string line = out.substr(0, out.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::vector<AmdGpuAgent> parse_rocminfo(const std::string& text) {
  std::vector<AmdGpuAgent> gpus;
  AmdGpuAgent agent;
  bool is_gpu = false, in_agent = false;
  auto flush = [&] {
    if (in_agent && is_gpu) gpus.push_back(agent);
    agent = {};
    is_gpu = false;
  };
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto a = line.find_first_not_of(" \t");
    if (a == std::string::npos) continue;
    line.erase(0, a);
    if (line.rfind("Agent ", 0) == 0 && line.find(':') == std::string::npos) {  // "Agent 2": a new agent
      flush();
      in_agent = true;
      continue;
    }
    const auto colon = line.find(':');
    if (!in_agent || colon == std::string::npos) continue;
    std::string key = line.substr(0, colon), value = line.substr(colon + 1);
    value.erase(0, std::min(value.size(), value.find_first_not_of(" \t")));
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
    // Only the agent's own fields (its first "Name:"); pools and ISAs below it repeat some keys.
    if (key == "Name" && agent.name.empty())
      agent.name = value;
    else if (key == "Marketing Name" && agent.marketing_name.empty())
      agent.marketing_name = value;
    else if (key == "Compute Unit" && agent.compute_units == 0)
      agent.compute_units = std::atoi(value.c_str());
    else if (key == "Device Type")
      is_gpu = value == "GPU";
  }
  flush();
  return gpus;
}

std::vector<AmdGpuAgent> amd_gpu_agents() {
  std::string out;
  if (process::run_captured({"rocminfo"}, 30, out) != 0) return {};
  return parse_rocminfo(out);
}

std::string device_model(const std::string& backend, int index) {
  if (const char* m = std::getenv("KEVOLVE_DEVICE_MODEL"); m && *m) return m;
  if (is_backend(backend, BackendKind::null)) return "null device";
  if (backend == "hip") {
    const auto gpus = amd_gpu_agents();
    if (index < 0 || index >= static_cast<int>(gpus.size())) return "no AMD GPU";
    return gpus[index].marketing_name.empty() ? gpus[index].name : gpus[index].marketing_name;
  }
  if (std::string_view(backend_traits(backend).device) == "cuda") {
    const std::string name = nvidia_smi_query("name", index);
    return name.empty() ? "unknown GPU" : name;
  }
  return cpu_model();
}

std::string device_class(const std::string& target, const std::string& model) { return target + " " + model; }

std::string local_device_class(const std::string& backend, int index) {
  return device_class(device_target(backend, index), device_model(backend, index));
}

int64_t device_memory_bytes(const std::string& backend, int index) {
  if (backend == "hip") return 0;  // not asked of ROCm here: unknown rather than the host's figure
  if (std::string_view(backend_traits(backend).device) == "cuda") {
    const std::string mib = nvidia_smi_query("memory.total", index);
    return mib.empty() ? 0 : std::atoll(mib.c_str()) * (int64_t{1} << 20);
  }
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("MemTotal:", 0) == 0) return std::atoll(line.c_str() + 9) * 1024;  // kB
  return 0;
}

double measure_host_copy_gbps() {
  const size_t bytes = size_t{256} << 20;
  std::vector<char> a(bytes, 1), b(bytes, 0);
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < n; ++i)
      ts.emplace_back([&, i] {
        const size_t lo = bytes / n * i, hi = i + 1 == n ? bytes : bytes / n * (i + 1);
        std::memcpy(b.data() + lo, a.data() + lo, hi - lo);
      });
    for (auto& t : ts) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best > 0 && b[bytes / 2] == 1 ? 2.0 * bytes / best / 1e9 : 0;
}

}  // namespace kevolve
