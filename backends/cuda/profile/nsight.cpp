#include "backends/cuda/profile/nsight.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "backends/backend.hpp"
#include "backends/process/run_captured.hpp"
#include "backends/cuda/launch_spec.hpp"

namespace kevolve::cuda {
namespace {

namespace fs = std::filesystem;

std::string find_ncu() {
  if (const char* p = std::getenv("KEVOLVE_NCU"); p && *p) return p;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(env))
      if (fs::exists(fs::path(h) / "bin" / "ncu")) return (fs::path(h) / "bin" / "ncu").string();
  if (fs::exists("/usr/local/cuda/bin/ncu")) return "/usr/local/cuda/bin/ncu";
  return "ncu";
}

// Splits one CSV line with quoted fields.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else
      cur += c;
  }
  out.push_back(cur);
  return out;
}

const char* const kMetrics =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,"
    "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio";

}  // namespace

std::string summarize_ncu_csv(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  int name_col = -1, value_col = -1, unit_col = -1, kernel_col = -1;
  std::map<std::string, std::pair<std::string, std::string>> m;
  std::string kernel;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '"') continue;
    auto f = fields(line);
    if (name_col < 0) {
      for (int i = 0; i < static_cast<int>(f.size()); ++i) {
        if (f[i] == "Metric Name") name_col = i;
        if (f[i] == "Metric Value") value_col = i;
        if (f[i] == "Metric Unit") unit_col = i;
        if (f[i] == "Kernel Name") kernel_col = i;
      }
      continue;
    }
    if (std::max({name_col, value_col, unit_col, kernel_col}) >= static_cast<int>(f.size())) continue;
    m[f[name_col]] = {f[value_col], f[unit_col]};
    kernel = f[kernel_col];
  }
  if (m.empty()) return "";
  auto get = [&](const std::string& k) { return m.count(k) ? m[k].first : std::string("?"); };
  std::ostringstream s;
  s << "Nsight Compute (" << kernel << ", one bench-size launch): DRAM throughput "
    << get("dram__throughput.avg.pct_of_peak_sustained_elapsed") << " % of peak, SM throughput "
    << get("sm__throughput.avg.pct_of_peak_sustained_elapsed") << " %, achieved occupancy "
    << get("sm__warps_active.avg.pct_of_peak_sustained_active") << " %, duration " << get("gpu__time_duration.sum")
    << " " << (m.count("gpu__time_duration.sum") ? m["gpu__time_duration.sum"].second : "") << "\n";
  std::vector<std::pair<double, std::string>> stalls;
  const std::string pre = "smsp__average_warps_issue_stalled_", post = "_per_issue_active.ratio";
  for (auto& [k, v] : m)
    if (k.rfind(pre, 0) == 0 && k.size() > pre.size() + post.size())
      stalls.push_back({std::atof(v.first.c_str()), k.substr(pre.size(), k.size() - pre.size() - post.size())});
  std::sort(stalls.rbegin(), stalls.rend());
  if (!stalls.empty()) {
    s << "top warp stalls (cycles per issued instruction):";
    for (size_t i = 0; i < stalls.size() && i < 3; ++i)
      s << (i ? ", " : " ") << stalls[i].second << " " << stalls[i].first;
    s << "\n";
  }
  return s.str();
}

std::string nsight_profile(const ProblemSpec& spec, const std::string& source, const EvalOptions& o,
                           const std::string& kevolve) {
  auto l = parse_launch_spec(source);
  if (!l) return "unavailable: Nsight Compute is run on kernel-only candidates (this one has host code)\n";
  const std::string dir = make_build_dir();
  if (dir.empty()) return "unavailable: no temporary folder\n";
  const std::string cand = dir + "/candidate.cu";
  std::ofstream(cand) << source;
  // Skip the launches of the verification shapes: profile the first launch at the benchmark size.
  const int skip = static_cast<int>(spec.verify.size()) * (o.trials + 1);
  std::string out;
  const int rc = process::run_captured({find_ncu(),
                                        "--clock-control",
                                        "none",
                                        "--target-processes",
                                        "all",
                                        "--kernel-name",
                                        l->kernel,
                                        "--launch-skip",
                                        std::to_string(skip),
                                        "--launch-count",
                                        "1",
                                        "--metrics",
                                        kMetrics,
                                        "--csv",
                                        kevolve,
                                        "eval",
                                        "--backend",
                                        "cuda",
                                        "--arch",
                                        o.arch,
                                        "--problem",
                                        spec.file,
                                        "--candidate",
                                        cand,
                                        "--min-reps",
                                        "1",
                                        "--max-reps",
                                        "3",
                                        "--min-time",
                                        "0.001"},
                                       300, out);
  remove_build_dir(dir);
  const std::string summary = summarize_ncu_csv(out);
  if (!summary.empty()) return summary;
  if (rc == 127) return "unavailable: ncu is not installed\n";
  const auto err = out.find("==ERROR==");
  return "unavailable: ncu gave no metrics" +
         (err == std::string::npos ? std::string() : " (" + out.substr(err, out.find('\n', err) - err) + ")") + "\n";
}

}  // namespace kevolve::cuda
