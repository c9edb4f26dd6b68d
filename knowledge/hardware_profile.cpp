#include "knowledge/hardware_profile.hpp"

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace kevolve {

Expected<HardwareProfile> load_hardware(const std::string& root, const std::string& target) {
  using R = Expected<HardwareProfile>;
  const std::string file = root + "/hardware/" + target + "/constraints.toml";
  std::ifstream in(file);
  if (!in) return R::failure("hardware target '" + target + "': cannot read " + file);
  std::stringstream ss;
  ss << in.rdbuf();
  HardwareProfile h;
  h.target = target;
  h.text = ss.str();
  try {
    auto t = toml::parse(h.text, file);
    for (auto&& [k, v] : t)
      if (v.is_integer()) h.numbers[std::string(k.str())] = *v.value<int64_t>();
  } catch (const toml::parse_error& e) {
    return R::failure(file + ": TOML syntax error: " + std::string(e.description()));
  }
  return h;
}

std::string detect_cpu_target() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line.find(" avx512f") != std::string::npos ? "x86-avx512" : "x86-avx2";
  return "x86-avx2";
}

std::string resolve_hardware(const std::string& backend, const std::string& hardware) {
  if (hardware != "auto") return hardware;
  if (backend == "hip") return "amd-cdna2";  // gfx90a, the HIP build's default target
  return backend == "cuda" ? "nvidia-hopper" : detect_cpu_target();
}

}  // namespace kevolve
