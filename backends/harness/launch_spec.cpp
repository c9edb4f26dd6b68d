#include "backends/harness/launch_spec.hpp"

#include <cmath>
#include <sstream>

#include "runtime/core/expr.hpp"

namespace kevolve {
namespace {

constexpr const char* kTag = "@kevolve";

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

bool has_launch_spec(const std::string& source) { return source.find(std::string("// ") + kTag) != std::string::npos; }

Expected<LaunchSpec> parse_launch_spec(const std::string& source) {
  using R = Expected<LaunchSpec>;
  LaunchSpec s;
  std::istringstream in(source);
  std::string line;
  int n = 0;
  bool any = false;
  while (std::getline(in, line)) {
    ++n;
    const auto c = line.find("//");
    if (c == std::string::npos) continue;
    const std::string body = trim(line.substr(c + 2));
    if (body.rfind(kTag, 0) != 0) continue;
    std::istringstream kv(body.substr(std::string(kTag).size()));
    std::string key;
    kv >> key;
    std::string value;
    std::getline(kv, value);
    value = trim(value);
    const std::string where = "line " + std::to_string(n) + ": @kevolve " + key;
    if (value.empty()) return R::failure(where + ": missing value");
    any = true;
    if (key == "kernel")
      s.kernel = value;
    else if (key == "grid")
      s.grid[0] = value;
    else if (key == "grid_y")
      s.grid[1] = value;
    else if (key == "grid_z")
      s.grid[2] = value;
    else if (key == "block")
      s.block[0] = value;
    else if (key == "block_y")
      s.block[1] = value;
    else if (key == "block_z")
      s.block[2] = value;
    else if (key == "smem")
      s.smem = value;
    else
      return R::failure(where +
                        ": unknown key (expected kernel, grid, grid_y, grid_z, block, block_y, block_z or smem)");
  }
  if (!any)
    return R::failure("no '// @kevolve' launch lines (a kernel-only candidate needs at least kernel, grid and block)");
  if (s.kernel.empty()) return R::failure("missing '// @kevolve kernel <name>'");
  if (s.grid[0] == "1" && s.block[0] == "1")
    return R::failure("missing '// @kevolve grid <expr>' and '// @kevolve block <expr>'");
  return s;
}

std::string format_launch_spec(const LaunchSpec& s) {
  std::ostringstream o;
  o << "// @kevolve kernel " << s.kernel << "\n";
  const char* g[] = {"grid", "grid_y", "grid_z"};
  const char* b[] = {"block", "block_y", "block_z"};
  for (int i = 0; i < 3; ++i)
    o << "// @kevolve " << g[i] << " " << s.grid[i] << "\n// @kevolve " << b[i] << " " << s.block[i] << "\n";
  o << "// @kevolve smem " << s.smem << "\n";
  return o.str();
}

Expected<LaunchDims> resolve_launch(const LaunchSpec& s, ShapeBinding symbols, int64_t sms) {
  using R = Expected<LaunchDims>;
  symbols["SMS"] = sms;
  LaunchDims d{};
  auto eval = [&](const std::string& text, const char* key, int64_t lo, int64_t hi, int64_t& out) -> std::string {
    std::string err;
    auto v = eval_expr(text, symbols, err);
    if (!v) return std::string(key) + " '" + text + "': " + err;
    out = static_cast<int64_t>(std::floor(*v));
    if (out < lo || out > hi)
      return std::string(key) + " '" + text + "' = " + std::to_string(out) + " (expected " + std::to_string(lo) + ".." +
             std::to_string(hi) + ")";
    return "";
  };
  const char* g[] = {"grid", "grid_y", "grid_z"};
  const char* b[] = {"block", "block_y", "block_z"};
  const int64_t gmax[] = {2147483647, 65535, 65535}, bmax[] = {1024, 1024, 64};
  for (int i = 0; i < 3; ++i) {
    if (auto e = eval(s.grid[i], g[i], 1, gmax[i], d.grid[i]); !e.empty()) return R::failure(e);
    if (auto e = eval(s.block[i], b[i], 1, bmax[i], d.block[i]); !e.empty()) return R::failure(e);
  }
  if (d.block[0] * d.block[1] * d.block[2] > 1024) return R::failure("block has more than 1024 threads");
  if (auto e = eval(s.smem, "smem", 0, 227 * 1024, d.smem); !e.empty()) return R::failure(e);
  return d;
}

}  // namespace kevolve
