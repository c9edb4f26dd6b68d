#include "backends/harness/judge.hpp"

#include <algorithm>
#include <sstream>

#include "runtime/core/expr.hpp"

namespace kevolve::harness {

std::optional<Verdict> judge_output(const CompareReport& rep, const OutputCheck& c, EvalResult& result) {
  if (rep.ok) {
    if (rep.max_abs >= result.max_abs_err) {
      result.max_abs_err = rep.max_abs;
      result.where = c.where + ", output '" + c.name + "' at " + c.index(rep.worst);
    }
    result.max_rel_err = std::max(result.max_rel_err, rep.max_rel);
    return std::nullopt;
  }
  const std::string index = c.index(rep.worst);
  const std::string at = c.where + ", output '" + c.name + "' " + index;
  const std::string text = describe(rep, c.name, index) + " (" + c.where + ")";
  result.max_abs_err = std::max(result.max_abs_err, rep.max_abs);
  result.max_rel_err = std::max(result.max_rel_err, rep.max_rel);
  // Outputs left unwritten on buffers the kernel has seen before (a timed run's, or trial 0's refilled),
  // while it wrote them all on fresh ones: it skips work it bets is still there.
  if (rep.unwritten)
    return c.phase == Phase::verify
               ? Verdict{EvalStatus::incorrect, "unwritten", text, at}
               : Verdict{EvalStatus::rejected, "poison",
                         std::string(c.phase == Phase::timed ? "in a timed run, " : "on buffers refilled with new data, ") +
                             text + ": the kernel skipped work on buffers it had seen before",
                         at};
  if (rep.magnitude_fail) return Verdict{EvalStatus::rejected, "magnitude", text, at};
  if (c.phase == Phase::timed)
    return Verdict{EvalStatus::rejected, "timed_outputs",
                   "a timed run gave wrong results while the verification runs were right: " + text, at};
  if (c.answers_earlier_data && c.answers_earlier_data()) {
    if (c.phase == Phase::refill)
      return Verdict{EvalStatus::rejected, "pointer_reuse",
                     "refilled with new data, the same input buffers gave the answer for their previous data: "
                     "results are cached by pointer (" +
                         c.where + ")",
                     at};
    return Verdict{EvalStatus::rejected, "fresh_data",
                   "the output is the answer for an earlier trial's inputs: the kernel returns stale memory "
                   "instead of computing (" +
                       c.where + ")",
                   at};
  }
  return Verdict{EvalStatus::incorrect, rep.nonfinite ? "nonfinite" : "mismatch", text, at};
}

Verdict nonzero_return(int rc, const std::string& where) {
  return Verdict{EvalStatus::runtime_error, "return_code",
                 "the kernel returned " + std::to_string(rc) + " (" + where + ")", where};
}

Verdict input_mutated(const std::string& input_name, const std::string& where) {
  return Verdict{EvalStatus::rejected, "input_mutation",
                 "the kernel modified its input '" + input_name + "' (" + where + ")", where};
}

void apply(EvalResult& result, const Verdict& v) {
  result.status = v.status;
  result.reason = v.reason;
  result.message = v.message;
  result.where = v.where;
  result.speedup = 0;
}

void apply_harness_error(EvalResult& result, const std::string& message) {
  result.status = EvalStatus::harness_error;
  result.reason = "harness";
  result.message = message;
}

std::vector<std::pair<std::string, ShapeBinding>> shapes_to_verify(const ProblemSpec& spec,
                                                                   const ShapeBinding& bench) {
  std::vector<std::pair<std::string, ShapeBinding>> shapes;
  for (size_t i = 0; i < spec.verify.size(); ++i) shapes.push_back({"verify[" + std::to_string(i) + "]", spec.verify[i]});
  shapes.push_back({"bench", bench});
  return shapes;
}

std::optional<double> set_achieved_rates(EvalResult& result, const ProblemSpec& spec, const ShapeBinding& bench) {
  std::string err;
  const double seconds = result.candidate.median_ms * 1e-3;
  const auto bytes = eval_expr(spec.roofline_bytes, bench, err);
  if (bytes && seconds > 0) result.candidate_gbps = *bytes / seconds / 1e9;
  if (auto flops = eval_expr(spec.roofline_flops, bench, err); flops && seconds > 0)
    result.candidate_gflops = *flops / seconds / 1e9;
  return bytes;
}

std::string correct_message(const EvalResult& result) {
  std::ostringstream os;
  os.precision(4);
  os << "correct on " << result.shapes << " shapes x " << result.trials << " trials; candidate "
     << result.candidate.median_ms << " ms vs reference " << result.reference.median_ms << " ms (" << result.speedup
     << "x)";
  return os.str();
}

}  // namespace kevolve::harness
