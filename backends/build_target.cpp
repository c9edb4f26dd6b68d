#include "backends/build_target.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

namespace kevolve {
namespace {

// The first line of a command's output ("" when it fails).
std::string first_line(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((cmd + " 2>/dev/null").c_str(), "r"), pclose);
  if (!p) return {};
  std::array<char, 512> buf{};
  std::string s = fgets(buf.data(), buf.size(), p.get()) ? buf.data() : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// gcc's resolution of -march=native on this machine (e.g. "znver3", "sapphirerapids"), asked once.
const std::string& native_march() {
  static const std::string m = [] {
    std::string line = first_line("g++ -march=native -Q --help=target | grep -m1 -E '^ +-march='");
    const auto eq = line.find('=');
    std::string v = eq == std::string::npos ? "" : line.substr(eq + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v.empty() ? std::string("unknown") : v;
  }();
  return m;
}

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
      // Handed to nvidia-smi through a shell: indices, UUIDs and MIG names only.
      return name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/:.") == std::string::npos
                 ? name
                 : std::to_string(index);
    }
    if (comma == std::string::npos) break;
    list.erase(0, comma + 1);
  }
  return std::to_string(index);
}

namespace {
// nvidia-smi ignores CUDA_VISIBLE_DEVICES: it is asked about the device this process sees as `index`.
std::string smi_device(int index) { return cuda_visible_device(index); }
}  // namespace

std::string build_target(const std::string& backend, const EvalOptions& o) {
  if (const char* t = std::getenv("KEVOLVE_BUILD_TARGET"); t && *t) return t;
  if (backend == "cpu") return "cpu:" + native_march();
  if (backend == "cuda") return "cuda:" + o.arch;
  return backend;
}

std::string device_target(const std::string& backend, int index) {
  if (const char* t = std::getenv("KEVOLVE_BUILD_TARGET"); t && *t) return t;
  if (backend == "cuda") {
    // "9.0" -> "sm_90"
    const std::string cap = first_line("nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i " + smi_device(index));
    const auto dot = cap.find('.');
    if (dot == std::string::npos) return "cuda:unknown";
    return "cuda:sm_" + cap.substr(0, dot) + cap.substr(dot + 1);
  }
  return build_target(backend, EvalOptions{});
}

std::string device_model(const std::string& backend, int index) {
  if (const char* m = std::getenv("KEVOLVE_DEVICE_MODEL"); m && *m) return m;
  if (backend == "null") return "null device";
  if (backend == "cuda" || backend == "python-cuda") {
    const std::string name = first_line("nvidia-smi --query-gpu=name --format=csv,noheader -i " + smi_device(index));
    return name.empty() ? "unknown GPU" : name;
  }
  return cpu_model();
}

std::string device_class(const std::string& target, const std::string& model) { return target + " " + model; }

std::string local_device_class(const std::string& backend, int index) {
  return device_class(device_target(backend, index), device_model(backend, index));
}

int64_t device_memory_bytes(const std::string& backend, int index) {
  if (backend == "cuda" || backend == "python-cuda") {
    const std::string mib = first_line("nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i " + smi_device(index));
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
