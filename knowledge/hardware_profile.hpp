// A hardware target of the knowledge base: knowledge/hardware/<target>/constraints.toml, read as
// numbers (vector_width_bytes, shared_memory_bytes, warp_size, ...) that template constraints may use,
// and as text that prompts carry. Adding a folder is all it takes to add a target.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve {

struct HardwareProfile {
  std::string target;                      // the folder name, e.g. x86-avx512
  std::map<std::string, int64_t> numbers;  // integer keys of constraints.toml
  std::string text;                        // the file as written
};

Expected<HardwareProfile> load_hardware(const std::string& knowledge_root, const std::string& target);

// The CPU target of this machine: x86-avx512 when the CPU has AVX-512F, else x86-avx2.
std::string detect_cpu_target();
// The hardware target of a config: `hardware` itself, or for "auto" this CPU's target (cpu backend) or
// nvidia-hopper (cuda backend).
std::string resolve_hardware(const std::string& backend, const std::string& hardware);

}  // namespace kevolve
