#include "runtime/records/backend_kind.hpp"
#include "backends/device_info.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

std::string device_model(const std::string& backend, int index) {
  if (const char* m = std::getenv("KEVOLVE_DEVICE_MODEL"); m && *m) return m;
  if (is_backend(backend, BackendKind::null)) return "null device";
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
