#include "runtime/operators/diagnosis.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>

#include "runtime/core/expr.hpp"

namespace kevolve {

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string fmt(const char* f, double a, double b = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// The first line of a compiler's output that states an error, without its path (at most 200 characters).
std::string first_error_line(const std::string& log) {
  std::istringstream lines(log);
  for (std::string l; std::getline(lines, l);) {
    const size_t at = l.find("error:");
    if (at == std::string::npos) continue;
    const size_t file = l.rfind('/', at);  // keep "candidate.cpp:3:10: error: ..." and drop the folder
    std::string out = file == std::string::npos ? l : l.substr(file + 1);
    if (out.size() > 200) out = out.substr(0, 200) + " ...";
    return out;
  }
  return {};
}

// A correct kernel against the roofline of the machine: the problem's bytes at the device's measured copy
// bandwidth are the memory floor; a kernel far above that floor is limited by its computation or by
// latency, whatever its arithmetic intensity, and fusing passes will not help it. A bandwidth that a
// measured run beat (the node's reference or candidate, or `achieved` from the search) is refused: a floor
// below what a run achieved is false.
void diagnose_speed(const NodeRecord& n, const ProblemSpec& spec, const std::string& backend, double peak_gbps,
                    double achieved, Diagnosis& d) {
  const bool gpu = backend == "cuda" || backend == "python-cuda" || backend == "hip";
  std::string err;
  const auto bytes = eval_expr(spec.roofline_bytes, spec.bench_for(backend), err);
  const auto flops = eval_expr(spec.roofline_flops, spec.bench_for(backend), err);
  const double seconds = n.candidate_ms * 1e-3;
  std::string refused;  // why the measured bandwidth is not used ("" = it is, or none was measured)
  const double ref_gbps = achieved_gbps(spec, backend, n.reference_ms);
  if (peak_gbps > 0) {
    const double fastest = std::max({achieved, ref_gbps, achieved_gbps(spec, backend, n.candidate_ms)});
    if (fastest > peak_gbps) {
      refused = fmt("the copy bandwidth measured during the evaluation (%.1f GB/s) is slower than ", peak_gbps) +
                (ref_gbps >= fastest ? fmt("the reference's own run (%.1f GB/s achieved)", fastest)
                                     : fmt("a measured run of this search (%.1f GB/s achieved)", fastest)) +
                ": it was measured while other work held the machine and is not used";
      peak_gbps = 0;
    }
  }
  if (!bytes || !flops || *bytes <= 0 || seconds <= 0) {
    d.summary = "correct" + (refused.empty() ? "" : " (" + refused + "; no memory floor is stated)");
  } else {
    const double gbps = *bytes / seconds / 1e9, gflops = *flops / seconds / 1e9, intensity = *flops / *bytes;
    const std::string times =
        n.reference_ms > 0 ? fmt("; median times: the kernel %.4g ms, the reference %.4g ms", n.candidate_ms,
                                 n.reference_ms)
                           : fmt("; the kernel's median time %.4g ms", n.candidate_ms);
    if (peak_gbps > 0) {
      const double share = gbps / peak_gbps, floor_ms = *bytes / (peak_gbps * 1e9) * 1e3;
      const std::string facts =
          fmt("%.1f GB/s achieved, %.0f%% of the device's measured copy bandwidth", gbps, 100 * share) +
          fmt(" (%.1f GB/s); memory floor %.3g ms", peak_gbps, floor_ms) +
          fmt(", the kernel takes %.3g ms (%.1fx the floor)", n.candidate_ms, n.candidate_ms / floor_ms) +
          fmt("; %.1f GFLOP/s at %.2f flop/byte", gflops, intensity) + times;
      if (share >= 0.6) {
        d.summary = "memory-bound: " + facts;
        if (share >= 0.85)
          d.directives.push_back(
              "It is near the bandwidth limit: only moving fewer bytes (fusing passes, narrower types where the "
              "tolerance allows) can still pay.");
        else
          d.directives.push_back(
              "The kernel is memory-bound: make fewer passes over memory (fuse passes, keep rows in cache), use "
              "contiguous vectorised loads and stores, and keep enough bytes in flight to reach the copy bandwidth.");
      } else if (share >= 0.3) {
        d.summary = "partly memory-bound: " + facts;
        d.directives.push_back(
            gpu ? "Below the bandwidth limit: put more bytes in flight (16-byte vector accesses, several independent "
                  "loads per thread, a grid that fills every multiprocessor) and check that the arithmetic per "
                  "element is not what holds it back."
                : "Below the bandwidth limit: vectorise the loads and stores, use every thread the evaluation gives "
                  "the kernel, and check that the arithmetic per element is not what holds it back.");
      } else {
        d.summary = "far below the memory floor: compute- or latency-bound: " + facts;
        d.directives.push_back(
            fmt("Memory is not what limits it: the kernel moves its bytes at %.0f%% of what the device copies, so "
                "fusing passes or saving bytes will not help yet. To run at the memory floor it would have to "
                "sustain %.1f GFLOP/s.",
                100 * share, intensity * peak_gbps));
        d.directives.push_back(
            gpu ? "Look at the work per element and at latency: too few threads or blocks in flight to hide memory "
                  "latency, long serial loops per thread, uncoalesced or strided accesses, slow math (accurate "
                  "expf/erff, divisions; use the fast intrinsics where the tolerance allows), shared-memory bank "
                  "conflicts, needless __syncthreads."
                : "Look at the work per element: scalar calls to expf/erf/log in the inner loop (a vectorised "
                  "polynomial is many times faster), divisions (multiply by a reciprocal), loops the compiler did "
                  "not vectorise (aliasing, int64 induction, a call in the body), one long dependency chain in a "
                  "reduction (use several accumulators), and threads left idle.");
      }
    } else if (intensity < 4) {
      d.summary =
          fmt("memory-bound by its arithmetic intensity: %.1f GB/s achieved at %.2f flop/byte", gbps, intensity) +
          times +
          (refused.empty() ? " (the device's copy bandwidth was not measured, so how far it is from the limit is unknown)"
                           : " (" + refused + "; no memory floor is stated, and how far the kernel is from the "
                                             "limit is unknown)");
      d.directives.push_back(
          "The problem is memory-bound on every machine once the kernel is good: make fewer passes over memory, use "
          "contiguous vectorised loads and stores, and use all cores; if it is far from the machine's bandwidth, "
          "look first at its arithmetic (scalar transcendental calls, divisions, loops that are not vectorised).");
    } else {
      d.summary = fmt("compute-bound: %.1f GFLOP/s at %.2f flop/byte", gflops, intensity) + times +
                  (refused.empty() ? "" : " (" + refused + "; no memory floor is stated)");
      d.directives.push_back(
          "The kernel is compute-bound: vectorise the inner loops (SIMD), cut expensive operations (divisions, "
          "transcendental functions) and use all cores.");
    }
  }
  d.directives.push_back(
      fmt("It is correct and %.2fx over PyTorch; keep it correct while making it faster.", n.fitness));
}

// The shape binding a report names, "(R=7, C=33)" in "verify[1] (R=7, C=33), trial 0" (empty if none).
ShapeBinding binding_in(const std::string& text) {
  static const std::regex paren(R"(\(([A-Za-z_]\w*=-?\d+(?:, [A-Za-z_]\w*=-?\d+)*)\))");
  static const std::regex pair(R"(([A-Za-z_]\w*)=(-?\d+))");
  ShapeBinding b;
  std::smatch m;
  if (!std::regex_search(text, m, paren)) return b;
  const std::string inner = m[1].str();
  for (auto it = std::sregex_iterator(inner.begin(), inner.end(), pair); it != std::sregex_iterator(); ++it)
    b[(*it)[1].str()] = std::stoll((*it)[2].str());
  return b;
}

// The largest common vector width (in elements: 16, 8 or 4) whose remainder holds column `j` of a row of
// `cols` elements (cols % w != 0 and j >= the last multiple of w), or 0.
int64_t tail_width(int64_t j, int64_t cols) {
  for (int64_t w : {16, 8, 4})
    if (cols % w != 0 && j >= cols - cols % w) return w;
  return 0;
}

}  // namespace

double achieved_gbps(const ProblemSpec& spec, const std::string& backend, double ms) {
  if (ms <= 0) return 0;
  std::string err;
  const auto bytes = eval_expr(spec.roofline_bytes, spec.bench_for(backend), err);
  return bytes && *bytes > 0 ? *bytes / (ms * 1e-3) / 1e9 : 0;
}

std::string locate_failure(const std::string& report, const ProblemSpec& spec) {
  static const std::regex first(R"(output '([^']+)': (\d+) [^\n]*?, first at \[([-0-9, ]+)\])");
  std::smatch m;
  if (!std::regex_search(report, m, first)) return {};
  const std::string name = m[1].str();
  const int64_t count = std::stoll(m[2].str());
  std::vector<int64_t> at;
  {
    std::stringstream ss(m[3].str());
    for (std::string x; std::getline(ss, x, ',');) at.push_back(std::stoll(x));
  }
  const ShapeBinding b = binding_in(m.suffix().str());
  const TensorSpec* out = nullptr;
  for (auto& o : spec.outputs)
    if (o.name == name) out = &o;
  if (!out || at.empty() || out->shape.size() != at.size()) return {};
  std::vector<int64_t> dims;
  std::string err;
  for (auto& e : out->shape) {
    const auto v = eval_expr(e, b, err);
    if (!v || *v <= 0) return {};
    dims.push_back(static_cast<int64_t>(*v));
  }
  int64_t numel = 1;
  for (auto v : dims) numel *= v;
  const int64_t cols = dims.back(), j = at.back(), rows = numel / cols;
  int64_t row = 0;  // the flat row of the first bad element
  for (size_t k = 0; k + 1 < at.size(); ++k) row = row * dims[k] + at[k];
  const std::string last = out->shape.back();  // the last dimension's expression, e.g. "C"
  const std::string where = "The first bad element of '" + name + "' (" + std::to_string(count) + " of " +
                            std::to_string(numel) + " wrong) is at index " + std::to_string(j) + " of " + last +
                            " = " + std::to_string(cols) + " in the last dimension";
  if (count == numel)
    return where + ": every element is wrong, so it is not an edge case: the formula, the output's layout, the "
                   "parameters or the inputs' order.";
  if (const int64_t w = tail_width(j, cols); w > 0) {
    const int64_t tail = cols % w;
    return where + fmt(", in the last %.0f column(s) of the row, past the last full %.0f-wide vector", tail, w) +
           " (" + std::to_string(cols) + " = " + std::to_string(cols / w) + " x " + std::to_string(w) + " + " +
           std::to_string(tail) + "): the last columns of each row are a tail the vector loop does not cover. " +
           "Handle the " + std::to_string(tail) +
           " remaining column(s) of every row (a scalar or masked tail loop), and check any blocked or unrolled "
           "loop's bound for rows whose length is not a multiple of its step.";
  }
  if (cols > 1 && j == 0 && count % std::max<int64_t>(1, rows - row) == 0)
    return where + ": the first column of the rows is wrong: look at the column loop's start, the value an "
                   "accumulator or running maximum starts from, and a peeled first iteration.";
  if (row == 0 && count <= cols && rows > 1)
    return where + ": only the first row (at most " + std::to_string(cols) +
           " elements) is wrong: a special case for row 0, such as the first thread's or block's start or a "
           "value carried into the first row.";
  if (row == 0 && numel % count == 0 && numel / count >= 2 && numel / count <= 64 && j < numel / count)
    return where + ": 1 in " + std::to_string(numel / count) +
           " elements is wrong: a stride pattern; look for a step, an unroll factor or a lane count of " +
           std::to_string(numel / count) + ", and for strides computed from the wrong dimension.";
  if (row > 0)
    return where + ", row " + std::to_string(row) + " of " + std::to_string(rows) +
           ": the rows before it are right; look at what changes there (a thread's or block's chunk boundary, a "
           "row offset or a pointer advanced by the wrong stride).";
  return where + ".";
}

Diagnosis diagnose(const NodeRecord& n, const ProblemSpec& spec, const std::string& report, const std::string& backend,
                   double peak_gbps, double achieved) {
  Diagnosis d;
  const std::string text = n.message + "\n" + report;
  switch (n.status) {
    case EvalStatus::compile_error:
      d.summary = "compile error";
      if (const std::string first = first_error_line(text); !first.empty()) d.summary += ": " + first;
      if (has(text, "was not declared") || has(text, "undeclared"))
        d.directives.push_back("An identifier is undeclared: add the missing #include or fix the name.");
      if (has(text, "no matching function") || has(text, "invalid conversion"))
        d.directives.push_back(
            "A call does not match its declaration: check argument types (const, pointer types, int64_t vs int).");
      if (has(text, "expected") && has(text, "before"))
        d.directives.push_back(
            "There is a syntax error: check brackets, semicolons and template syntax near the reported line.");
      d.directives.push_back(
          "Fix the compile errors shown above first; keep the optimisation idea only if it compiles.");
      break;
    case EvalStatus::incorrect:
      d.summary = "incorrect: " + n.reason;
      if (const std::string located = locate_failure(text, spec); !located.empty())
        d.directives.push_back(located);
      if (n.reason == "unwritten")
        d.directives.push_back(
            "Some output elements were never written: check loop bounds and the tail for sizes that are not a multiple "
            "of the vector width or block size.");
      else if (n.reason == "nonfinite")
        d.directives.push_back(
            "NaN/Inf appeared where the reference is finite: look for overflow in exp (subtract the row maximum), "
            "division by zero, or uninitialised accumulators.");
      else
        d.directives.push_back(
            "Values are wrong: re-derive the formula from the reference, check indexing (row vs column, strides) and "
            "the reduction's initial value; compare against the verification shapes with odd sizes.");
      break;
    case EvalStatus::rejected:
      d.summary = "rejected by the " + n.reason + " detector";
      d.directives.push_back("The evaluator caught a forbidden behaviour (" + n.reason +
                             "): compute every output from the inputs on every call, inside the call, without caching, "
                             "without touching the inputs, and without other processes.");
      break;
    case EvalStatus::timeout:
      d.summary = "timeout";
      d.directives.push_back(
          "The kernel did not finish in time: look for an infinite loop, a wrong loop bound, or work that grows "
          "quadratically.");
      break;
    case EvalStatus::runtime_error:
      d.summary = "runtime error";
      d.directives.push_back(
          "The kernel crashed: check every index against the tensor shapes (out-of-bounds reads or writes), and "
          "allocations.");
      break;
    case EvalStatus::ok:
      diagnose_speed(n, spec, backend, peak_gbps, achieved, d);
      break;
    default:
      d.summary = status_name(n.status);
  }
  return d;
}

}  // namespace kevolve
