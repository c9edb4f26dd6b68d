#include "runtime/operators/diagnosis.hpp"

#include <cstdio>
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
// latency, whatever its arithmetic intensity, and fusing passes will not help it.
void diagnose_speed(const NodeRecord& n, const ProblemSpec& spec, const std::string& backend, double peak_gbps,
                    Diagnosis& d) {
  const bool gpu = backend == "cuda" || backend == "python-cuda" || backend == "hip";
  std::string err;
  const auto bytes = eval_expr(spec.roofline_bytes, spec.bench_for(backend), err);
  const auto flops = eval_expr(spec.roofline_flops, spec.bench_for(backend), err);
  const double seconds = n.candidate_ms * 1e-3;
  if (!bytes || !flops || *bytes <= 0 || seconds <= 0) {
    d.summary = "correct";
  } else {
    const double gbps = *bytes / seconds / 1e9, gflops = *flops / seconds / 1e9, intensity = *flops / *bytes;
    if (peak_gbps > 0) {
      const double share = gbps / peak_gbps, floor_ms = *bytes / (peak_gbps * 1e9) * 1e3;
      const std::string facts =
          fmt("%.1f GB/s achieved, %.0f%% of the device's measured copy bandwidth", gbps, 100 * share) +
          fmt(" (%.1f GB/s); memory floor %.3g ms", peak_gbps, floor_ms) +
          fmt(", the kernel takes %.3g ms (%.1fx the floor)", n.candidate_ms, n.candidate_ms / floor_ms) +
          fmt("; %.1f GFLOP/s at %.2f flop/byte", gflops, intensity);
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
          " (the device's copy bandwidth was not measured, so how far it is from the limit is unknown)";
      d.directives.push_back(
          "The problem is memory-bound on every machine once the kernel is good: make fewer passes over memory, use "
          "contiguous vectorised loads and stores, and use all cores; if it is far from the machine's bandwidth, "
          "look first at its arithmetic (scalar transcendental calls, divisions, loops that are not vectorised).");
    } else {
      d.summary = fmt("compute-bound: %.1f GFLOP/s at %.2f flop/byte", gflops, intensity);
      d.directives.push_back(
          "The kernel is compute-bound: vectorise the inner loops (SIMD), cut expensive operations (divisions, "
          "transcendental functions) and use all cores.");
    }
  }
  d.directives.push_back(
      fmt("It is correct and %.2fx over PyTorch; keep it correct while making it faster.", n.fitness));
}

}  // namespace

Diagnosis diagnose(const NodeRecord& n, const ProblemSpec& spec, const std::string& report, const std::string& backend,
                   double peak_gbps) {
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
      diagnose_speed(n, spec, backend, peak_gbps, d);
      break;
    default:
      d.summary = status_name(n.status);
  }
  return d;
}

}  // namespace kevolve
