// Helpers for the HIP tests: the HIP templates at their defaults (and at the last value of every
// parameter, where the target's constraints allow it), rendered once per test.
#pragma once
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"

namespace kevolve::test {

struct RenderedTemplate {
  std::string problem, point, source;  // point: "defaults" or "last values"
};

// Every core problem's HIP template rendered at its defaults, plus its last values when they satisfy the
// template's constraints with the hardware numbers of `hardware` (a knowledge/hardware folder name), its
// wave size replaced by `wave_size` when that is not 0 (RDNA's 32 on a CDNA profile).
inline std::vector<RenderedTemplate> hip_template_points(const std::string& hardware, bool with_last,
                                                         int wave_size = 0) {
  namespace fs = std::filesystem;
  std::vector<RenderedTemplate> out;
  std::vector<std::string> names;
  for (auto& dir : fs::directory_iterator(source_path("problems/core")))
    names.push_back(dir.path().filename().string());
  std::sort(names.begin(), names.end());
  auto hw = load_hardware(source_path("knowledge"), hardware);
  for (auto& name : names) {
    auto t = find_template("hip", name, {source_path("knowledge")});
    if (!t) throw std::runtime_error(t.error());
    if (hw) t->hardware = hw->numbers;
    if (wave_size) t->hardware["wave_size"] = wave_size;
    auto src = t->render(t->defaults());
    if (!src) throw std::runtime_error(src.error());
    out.push_back({name, "defaults", *src});
    if (!with_last) continue;
    Params last = t->defaults();
    for (auto& d : t->params) last[d.name] = d.values.back();
    if (t->hardware.count("wave_size") && last.count("wave"))      // the wave parameter names the target's
      last["wave"] = std::to_string(t->hardware.at("wave_size"));  // wave size
    if (t->violated(last).empty()) out.push_back({name, "last values", *t->render(last)});
  }
  return out;
}

}  // namespace kevolve::test
