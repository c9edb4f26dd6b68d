#include "runtime/operators/diagnosis.hpp"

#include <cstdio>

#include "runtime/core/expr.hpp"

namespace kevolve {

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string fmt(const char* f, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

Diagnosis diagnose(const NodeRecord& n, const ProblemSpec& spec, const std::string& report, const std::string& backend,
                   double peak_gbps) {
  Diagnosis d;
  const std::string text = n.message + "\n" + report;
  switch (n.status) {
    case EvalStatus::compile_error:
      d.summary = "compile error";
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
    case EvalStatus::ok: {
      std::string err;
      const auto bytes = eval_expr(spec.roofline_bytes, spec.bench_for(backend), err);
      const auto flops = eval_expr(spec.roofline_flops, spec.bench_for(backend), err);
      if (bytes && flops && n.candidate_ms > 0) {
        const double gbps = *bytes / (n.candidate_ms * 1e-3) / 1e9;
        const double intensity = *flops / *bytes;
        if (intensity < 4) {
          d.summary = fmt("memory-bound: %.1f GB/s achieved at %.2f flop/byte", gbps, intensity);
          if (peak_gbps > 0) {
            const double pct = 100 * gbps / peak_gbps;
            d.summary += fmt(", %.0f%% of the device's measured copy bandwidth", pct);
            if (pct >= 85)
              d.directives.push_back(
                  "It is near the bandwidth limit: only moving fewer bytes (fusing, narrower types where the tolerance "
                  "allows) can still pay.");
            else if (pct < 60)
              d.directives.push_back(
                  "Far below the bandwidth limit: put more bytes in flight (16-byte vector accesses, several "
                  "independent loads per thread, more threads or rows per block, a grid that fills every "
                  "multiprocessor).");
          }
          d.directives.push_back(
              "The kernel is memory-bound: make fewer passes over memory (fuse passes, keep rows in cache), use "
              "contiguous vectorised loads and stores, and use all cores.");
        } else {
          d.summary =
              fmt("compute-bound: %.1f GFLOP/s at %.2f flop/byte", *flops / (n.candidate_ms * 1e-3) / 1e9, intensity);
          d.directives.push_back(
              "The kernel is compute-bound: vectorise the inner loops (SIMD), cut expensive operations (divisions, "
              "transcendental functions) and use all cores.");
        }
      } else {
        d.summary = "correct";
      }
      d.directives.push_back(
          fmt("It is correct and %.2fx over PyTorch; keep it correct while making it faster.", n.fitness));
      break;
    }
    default:
      d.summary = status_name(n.status);
  }
  return d;
}

}  // namespace kevolve
