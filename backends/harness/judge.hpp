// The verdicts every trusted evaluator (CPU, CUDA, HIP) gives, written once: how one finished call's
// outputs are judged against the reference (wrong, unwritten, stale, changed after return, cheating in a
// timed run), how a verdict or a harness failure lands in the EvalResult, which shapes are verified, and
// the words of a correct result. On raw host buffers; no torch, no device code. Each backend keeps only how
// it reaches its memory (a shared arena, device copies) and how it launches and times.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/harness/verify.hpp"
#include "runtime/records/evaluation.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::harness {

// Where in an evaluation a call ran: a verification trial, trial 0's input buffers refilled with new data,
// or a timed run (outputs checked at drawn positions, every wrong answer a sign of cheating).
enum class Phase { verify, refill, timed };

// A verdict found by a check; a check that passes gives none (std::nullopt).
struct Verdict {
  EvalStatus status;
  std::string reason, message, where;
};

// One output of one finished call, on host memory, compared with its reference.
struct OutputCheck {
  std::string name;   // the spec's name of the output
  std::string where;  // the call: "verify[0] (N=4096), trial 2"
  Phase phase = Phase::verify;
  // Flat index -> "[i, j]" in the output's shape.
  std::function<std::string(int64_t)> index;
  // Asked only for a wrong output outside a timed run: whether it equals the answer for other data these
  // buffers (refill) or this shape (verify) saw before. None: no earlier data.
  std::function<bool()> answers_earlier_data;
};

// The verdict on an output whose comparison gave `rep` (nullopt: it passed). Records its errors in the
// result's max_abs_err / max_rel_err / where (the largest error of a passing output names its place).
std::optional<Verdict> judge_output(const CompareReport& rep, const OutputCheck& c, EvalResult& result);

// A call whose return code is not 0.
Verdict nonzero_return(int rc, const std::string& where);
// An input whose bytes differ from the evaluator's original after the call.
Verdict input_mutated(const std::string& input_name, const std::string& where);

// The result of an evaluation a verdict ended: status, reason, message and place, no speedup.
void apply(EvalResult& result, const Verdict& v);
// The result of an evaluation the harness could not carry out (status harness_error, reason "harness").
void apply_harness_error(EvalResult& result, const std::string& message);

// The shapes every evaluator verifies, in order: "verify[i]" for each of the spec's, then "bench" (the
// backend's bench shape).
std::vector<std::pair<std::string, ShapeBinding>> shapes_to_verify(const ProblemSpec& spec, const ShapeBinding& bench);

// The achieved GB/s and GFLOP/s of the candidate's median time on the bench shape, from the spec's
// roofline expressions (left 0 where an expression is missing or the time is 0). Returns the bytes the
// problem moves, when its expression evaluates.
std::optional<double> set_achieved_rates(EvalResult& result, const ProblemSpec& spec, const ShapeBinding& bench);

// "correct on S shapes x T trials; candidate C ms vs reference R ms (Kx)".
std::string correct_message(const EvalResult& result);

}  // namespace kevolve::harness
