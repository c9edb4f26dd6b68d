#include "backends/cpu/evaluator/evaluate.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <list>
#include <map>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "backends/cpu/evaluator/arena.hpp"
#include "backends/reference/eval_common.hpp"
#include "backends/reference/generators.hpp"
#include "backends/reference/reference_data.hpp"
#include "backends/reference/references.hpp"
#include "backends/cpu/evaluator/runner_process.hpp"
#include "backends/harness/stats.hpp"
#include "backends/harness/cache_size.hpp"
#include "backends/harness/judge.hpp"
#include "backends/harness/verify.hpp"
#include "runtime/records/records_codec.hpp"

namespace kevolve::cpu {
namespace {

using namespace kevolve::reference;

// One set of buffers in the arena with the evaluator's own copies of its inputs and expected outputs.
struct Slot {
  Tensors inputs;    // evaluator-private originals (the reference ran on clones of these)
  Tensors expected;  // reference outputs
  Call call;
};

using harness::Phase;
using harness::Verdict;

using Clock = std::chrono::steady_clock;

// Verification buffers of at least this many bytes are refilled from trial 2 on (see verify_shape()).
constexpr int64_t kRefillBytes = int64_t(16) << 20;
// Positions of each output checked after every timed run (see check()).
constexpr int64_t kTimedPositions = 1 << 16;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Where the timing's seconds went, for the profile's "evaluation phases" line.
struct TimingPhases {
  double sets = 0, dry = 0, refresh = 0, reference = 0, candidate = 0, checks = 0, bandwidth = 0;
  int passes = 0, attempts = 0, sets_made = 0;
  std::string text() const {
    std::ostringstream os;
    os.precision(3);
    os << sets_made << " rotation sets made in " << sets << " s, runner cost " << dry << " s, " << passes
       << " candidate passes " << candidate << " s (of which output checks " << checks << " s), reference "
       << reference << " s, fresh inputs " << refresh << " s, " << attempts << " attempt(s), bandwidth "
       << bandwidth << " s";
    return os.str();
  }
};

class Evaluation {
 public:
  Evaluation(const EvalRequest& q, std::string runner)
      : q_(q), spec_(q.spec), opt_(q.options), runner_path_(std::move(runner)) {}

  EvalResult run() {
    res_.detectors = opt_.detectors;
    threads_ = opt_.threads > 0 ? opt_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    at::set_num_threads(threads_);
    ref_ = find_reference(spec_.reference);
    if (!ref_) return harness_error("no reference named '" + spec_.reference + "' is registered in this evaluator");
    for (auto& name : ref_->inputs) {
      bool found = false;
      for (auto& in : spec_.inputs) found |= in.name == name;
      if (!found) {
        std::string want;
        for (auto& n : ref_->inputs) want += (want.empty() ? "" : ", ") + n;
        return harness_error(spec_.file + ": the reference '" + ref_->name + "' takes inputs named " + want +
                             "; the spec has no input '" + name + "'");
      }
    }
    for (auto& p : spec_.params) params_.push_back(p.value);
    {
      wire::Writer w;
      encode(w, spec_);
      spec_key_ = std::to_string(std::hash<std::string>{}(std::string(w.bytes().begin(), w.bytes().end())));
    }
    if (opt_.trials < 5)
      return harness_error("at least 5 verification trials are required (got " + std::to_string(opt_.trials) + ")");
    if (auto a = Arena::create(arena_, int64_t(1) << 40); !a) return harness_error("shared memory: " + a.message);

    RunnerConfig rc{runner_path_,         q_.artifact,      q_.entry.empty() ? spec_.entry : q_.entry,
                    arena_.fd(),          arena_.size(),    threads_,
                    opt_.memory_limit_mb, opt_.cpu_limit_s, on(Detector::isolation)};
    RunnerFailure f;
    const auto t_start = Clock::now();
    if (!runner_.start(rc, std::max(30.0, opt_.call_timeout_s), f)) return fail(f, "loading the candidate");
    const auto t_loaded = Clock::now();
    res_.sandbox = rc.sandbox ? runner_.sandbox() : "off (the isolation detector is switched off)";

    const auto shapes = harness::shapes_to_verify(spec_, spec_.bench);
    std::ostringstream verified;  // per shape: its seconds
    verified.precision(3);
    for (size_t s = 0; s < shapes.size(); ++s) {
      const auto t0 = Clock::now();
      if (auto v = verify_shape(s, shapes[s].first, shapes[s].second)) return finish(*v);
      verified << (s ? ", " : "") << shapes[s].first << " " << secs(t0, Clock::now());
    }
    const auto t_verified = Clock::now();
    res_.shapes = static_cast<int>(shapes.size());
    res_.trials = opt_.trials;
    if (auto v = time_bench()) return finish(*v);
    {
      std::ostringstream ph;
      ph.precision(3);
      ph << "evaluation phases: runner start and load " << secs(t_start, t_loaded) << " s, verification "
         << secs(t_loaded, t_verified) << " s (" << verified.str() << "; data generated " << generated_ << " times in "
         << generate_s_ << " s, from the worker's cache " << cached_ << " times), timing "
         << secs(t_verified, Clock::now()) << " s (" << timing_.text() << ")\n";
      res_.profile += ph.str();
    }
    res_.status = EvalStatus::ok;
    res_.reason.clear();
    std::ostringstream os;
    os << harness::correct_message(res_);
    if (ref_starved_ > 0)
      os << "; " << ref_starved_ << " reference calls waited for a CPU (other work on this machine) and count "
         << "their time less those waits";
    res_.message = os.str();
    res_.runner_log = runner_.log_tail();
    return res_;
  }

 private:
  bool on(Detector d) const { return opt_.detectors.on(d); }

  EvalResult harness_error(const std::string& m) {
    harness::apply_harness_error(res_, m);
    return res_;
  }

  // The result of an evaluation its runner failed `during` (starting, loading): the runner's own verdict.
  EvalResult fail(const RunnerFailure& f, const std::string& during) {
    harness::apply(res_, Verdict{f.status, f.reason, f.message + (during.empty() ? "" : " (" + during + ")"), ""});
    res_.runner_log = runner_.log_tail();
    return res_;
  }

  EvalResult finish(const Verdict& v) {
    harness::apply(res_, v);
    res_.runner_log = runner_.log_tail();
    return res_;
  }

  // Inputs + reference outputs for one shape and seed (the reference runs on its own clones).
  std::optional<Verdict> make_data(const ShapeBinding& shape, uint64_t seed, Tensors& inputs, Tensors& expected) {
    const std::string key = spec_key_ + "|" + shape_string(shape) + "|" + std::to_string(seed);
    if (DataCache::instance().get(key, inputs, expected)) {
      ++cached_;
      return std::nullopt;
    }
    const auto t0 = Clock::now();
    auto v = compute_data(shape, seed, inputs, expected);
    ++generated_;
    generate_s_ += secs(t0, Clock::now());
    if (!v) DataCache::instance().put(key, inputs, expected);
    return v;
  }

  std::optional<Verdict> compute_data(const ShapeBinding& shape, uint64_t seed, Tensors& inputs, Tensors& expected) {
    if (auto f = make_trial_data(spec_, *ref_, params_, shape, seed, at::kCPU, inputs, expected))
      return Verdict{EvalStatus::harness_error, f->part, f->message, ""};
    return std::nullopt;
  }

  // `inputs` themselves (the same tensors, no copy) in the order the reference takes them.
  Tensors in_reference_order(const Tensors& inputs) const {
    return reference::in_reference_order(spec_, *ref_, inputs);
  }

  // Seed of the data for shape `shape_index` and use `k` (trial, refill, timing set). With fresh_data
  // off every use of a shape sees the same data, as in a harness that never varies its inputs.
  uint64_t seed_for(size_t shape_index, uint64_t k) const {
    return mix_seed(opt_.seed, shape_index, on(Detector::fresh_data) ? k : 0);
  }

  ArenaTensor place(const at::Tensor& t, bool output) {
    ArenaTensor a;
    a.bytes = t.numel() * t.element_size();
    a.offset = arena_.allocate(a.bytes);
    a.dtype = static_cast<int32_t>(dtype_from(t.scalar_type()));
    for (int64_t d = 0; d < t.dim(); ++d) {
      a.shape.push_back(t.size(d));
      a.strides.push_back(t.stride(d));
    }
    if (t.dim() == 0) {
      a.shape.push_back(1);
      a.strides.push_back(1);
    }
    if (output)
      a.snapshot_offset = arena_.allocate(a.bytes);
    else
      std::memcpy(arena_.at(a.offset), t.data_ptr(), static_cast<size_t>(a.bytes));
    return a;
  }

  Slot make_slot(Tensors inputs, Tensors expected) {
    Slot s{std::move(inputs), std::move(expected), {}};
    for (auto& t : s.inputs) s.call.inputs.push_back(place(t, false));
    for (auto& t : s.expected) s.call.outputs.push_back(place(t, true));
    return s;
  }

  void release(const Slot& s) {
    for (auto& t : s.call.inputs) arena_.release(t.offset, t.bytes);
    release_outputs(s);
  }
  void release_outputs(const Slot& s) {
    for (auto& t : s.call.outputs) {
      arena_.release(t.offset, t.bytes);
      if (t.snapshot_offset >= 0) arena_.release(t.snapshot_offset, t.bytes);
    }
  }

  uint32_t flags() const {
    return (on(Detector::poison) ? kPoison : 0u) | (on(Detector::escaped_work) ? kSnapshot : 0u);
  }

  // Runs the calls of `slots` as one batch; a runner failure becomes a verdict.
  std::optional<Verdict> run_batch(const std::vector<Slot*>& slots, std::vector<CallOutcome>& out,
                                   const std::string& during, std::optional<uint32_t> flags_override = std::nullopt) {
    Batch b;
    b.flags = flags_override ? *flags_override : flags();
    b.params = params_;
    for (auto* s : slots) b.calls.push_back(s->call);
    RunnerFailure f;
    if (!runner_.run(b, opt_.call_timeout_s * static_cast<double>(slots.size()), out, f))
      return Verdict{f.status, f.reason, f.message + " (" + during + ")", during};
    return std::nullopt;
  }

  // Every check of one finished call. `earlier` holds expected outputs of other data the same buffers or
  // shape saw before (to recognise stale answers).
  std::optional<Verdict> check(const Slot& s, const CallOutcome& o, Phase phase, const std::string& where,
                               const std::vector<const Tensors*>& earlier) {
    if (o.rc != 0) return harness::nonzero_return(o.rc, where);
    if (on(Detector::input_mutation))
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const auto& t = s.call.inputs[i];
        if (std::memcmp(arena_.at(t.offset), s.inputs[i].data_ptr(), static_cast<size_t>(t.bytes)) != 0)
          return harness::input_mutated(spec_.inputs[i].name, where);
      }
    for (size_t i = 0; i < s.expected.size(); ++i) {
      const auto& t = s.call.outputs[i];
      const std::string& name = spec_.outputs[i].name;
      // Timed batches take no snapshot: the runner is stopped the moment it answers instead.
      if (phase != Phase::timed && on(Detector::escaped_work) &&
          std::memcmp(arena_.at(t.offset), arena_.at(t.snapshot_offset), static_cast<size_t>(t.bytes)) != 0)
        return Verdict{EvalStatus::rejected, "escaped_work",
                       "output '" + name +
                           "' changed after the kernel returned: work escaped the timer on another thread (" + where +
                           ")",
                       where};
      const DType d = spec_.outputs[i].dtype;
      const Tolerance tol = spec_.tolerances.at(d);
      const int64_t n = s.expected[i].numel();
      const harness::CompareOptions how{tol, on(Detector::poison), on(Detector::magnitude)};
      // Timed runs: every output is checked at positions drawn afresh for each run (verification runs
      // check every element). A candidate that skips or reuses work on more than a sliver of its output is
      // caught; a sliver would not make it measurably faster.
      const void* got = arena_.at(t.offset);
      const auto rep = phase == Phase::timed && n > 4 * kTimedPositions
                           ? harness::compare_at(got, s.expected[i].data_ptr(), d, drawn_positions(n), how)
                           : harness::compare(got, s.expected[i].data_ptr(), d, n, how);
      const harness::OutputCheck c{
          name, where, phase, [&](int64_t flat) { return index_string(s.expected[i], flat); }, [&] {
            for (auto* e : earlier)
              if (harness::matches(got, (*e)[i].data_ptr(), d, n, tol)) return true;
            return false;
          }};
      if (auto v = harness::judge_output(rep, c, res_)) return v;
    }
    return std::nullopt;
  }

  // kTimedPositions flat indices below n, drawn from this evaluation's own random source (the candidate
  // cannot know them) and sorted (the gather then walks the buffer forwards).
  std::vector<int64_t> drawn_positions(int64_t n) {
    std::uniform_int_distribution<int64_t> pick(0, n - 1);
    std::vector<int64_t> at(static_cast<size_t>(kTimedPositions));
    for (auto& i : at) i = pick(positions_rng_);
    std::sort(at.begin(), at.end());
    return at;
  }

  // The verification trials of one shape. Every trial gets fresh buffers (fresh data at fresh addresses: a
  // kernel answering from memory of earlier data is caught by fresh_data), and with pointer_reuse on a last
  // round refills trial 0's input buffers with new data (a kernel caching results by pointer answers for
  // their previous data). For a shape whose buffers hold kRefillBytes or more, trials 2 onwards refill trial
  // 0's buffers (inputs, outputs poisoned again before the call, snapshots) instead, and are that round:
  // pointer caches are caught as before (pointer_reuse), work skipped on outputs seen before leaves them
  // poisoned (poison), and trials 0 and 1 still see fresh addresses. A fresh page's first touch costs each
  // process about 8 us on a VM with shadow paging (a 64 MB buffer: 0.13 s per process, six touches per
  // trial); refilled buffers are already mapped by both.
  std::optional<Verdict> verify_shape(size_t index, const std::string& label, const ShapeBinding& shape) {
    std::vector<Tensors> earlier;  // expected outputs of the trials so far
    std::optional<Slot> first;
    bool refilled_any = false;
    const std::string shape_text = label + " (" + shape_string(shape) + ")";
    for (int t = 0; t <= opt_.trials; ++t) {
      // The last round is the refill of the old scheme, needed only when no trial refilled trial 0's buffers.
      const bool refill_round = t == opt_.trials;
      if (refill_round && (refilled_any || !on(Detector::pointer_reuse))) break;
      Tensors in, exp;
      if (auto v = make_data(shape, seed_for(index, refill_round ? 1000 : static_cast<uint64_t>(t)), in, exp))
        return v;
      const bool refill = on(Detector::pointer_reuse) && first && fits(*first, in, exp) &&
                          (refill_round || (t >= 2 && slot_bytes(*first) >= kRefillBytes));
      if (refill_round && !refill) break;  // data-dependent sizes differ: the buffers cannot be reused
      Slot s = refill ? refilled(*first, std::move(in), std::move(exp), /*same_outputs=*/!refill_round)
                      : make_slot(std::move(in), std::move(exp));
      const std::string where =
          shape_text + (refill_round ? ", trial 0's buffers refilled"
                                     : ", trial " + std::to_string(t) + (refill ? " on trial 0's buffers refilled" : ""));
      std::vector<CallOutcome> out;
      if (auto v = run_batch({&s}, out, where)) return v;
      std::vector<const Tensors*> prev;
      for (auto& e : earlier) prev.push_back(&e);
      if (auto v = check(s, out[0], refill ? Phase::refill : Phase::verify, where, prev)) return v;
      earlier.push_back(s.expected);
      refilled_any |= refill;
      if (t == 0)
        first = std::move(s);
      else if (!refill)
        release(s);
      else if (refill_round)
        release_outputs(s);
    }
    if (first) release(*first);
    return std::nullopt;
  }

  static int64_t slot_bytes(const Slot& slot) {
    int64_t b = 0;
    for (auto* v : {&slot.call.inputs, &slot.call.outputs})
      for (auto& t : *v) b += t.bytes;
    return b;
  }

  // Whether data of these sizes fits the buffers of `slot` (data-dependent sizes may differ).
  static bool fits(const Slot& slot, const Tensors& in, const Tensors& exp) {
    bool same = in.size() == slot.inputs.size() && exp.size() == slot.expected.size();
    for (size_t i = 0; same && i < in.size(); ++i) same = in[i].sizes() == slot.inputs[i].sizes();
    for (size_t i = 0; same && i < exp.size(); ++i) same = exp[i].sizes() == slot.expected[i].sizes();
    return same;
  }

  // A slot on the input buffers of `slot` holding new data (copied in), on its outputs and their snapshots
  // too when `same_outputs` (poisoned by the runner before the call, as in every verification call), else
  // on fresh ones.
  Slot refilled(const Slot& slot, Tensors in, Tensors exp, bool same_outputs) {
    Slot s{std::move(in), std::move(exp), slot.call};
    for (size_t i = 0; i < s.inputs.size(); ++i)
      std::memcpy(arena_.at(s.call.inputs[i].offset), s.inputs[i].data_ptr(),
                  static_cast<size_t>(s.call.inputs[i].bytes));
    if (!same_outputs) {
      s.call.outputs.clear();
      for (auto& t : s.expected) s.call.outputs.push_back(place(t, true));
    }
    return s;
  }

  // One rotation set of the timing: its slot in the arena, the pristine inputs new values are made from
  // (one generated set, shared by every rotation set and never written), and the reference bound to the
  // slot's private inputs (the evaluator's memory, which the runner cannot reach; the references are
  // functional: they never write their inputs).
  struct TimingSet {
    Slot slot;
    Tensors pristine;  // spec order, as generated
    BoundReference bound;
  };

  // New input values for a timing set, different in every pass (so no cache keyed on addresses or on
  // sampled values can answer from an earlier pass), drawn so that the generator's promises still hold:
  // normal/uniform inputs are scaled towards their mean/lower bound by a random factor in [0.95, 1);
  // iid integer inputs (randint, ids_from) are permuted; structured inputs (sorted keys, offsets,
  // segments) keep their values. Writes the values into the slot's inputs (the reference's) and the arena.
  void refresh(TimingSet& t, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0.95, 1.0);
    for (size_t i = 0; i < spec_.inputs.size(); ++i) {
      const GeneratorSpec& g = spec_.inputs[i].generator;
      at::Tensor& x = t.slot.inputs[i];
      const at::Tensor& p = t.pristine[i];
      if ((g.kind == "normal" || g.kind == "uniform") && p.is_floating_point()) {
        const double centre = g.kind == "normal" ? (g.numbers.count("mean") ? g.numbers.at("mean") : 0.0)
                                                 : (g.numbers.count("low") ? g.numbers.at("low") : 0.0);
        const double f = u(rng);  // x = centre + (p - centre) * f, written in place (no temporary)
        at::mul_out(x, p, f);
        if (centre != 0) x.add_(centre * (1 - f));
      } else if ((g.kind == "randint" || g.kind == "ids_from") && p.numel() > 1) {
        at::Generator gen = at::detail::createCPUGenerator(rng());
        const at::Tensor perm = at::randperm(p.numel(), gen, at::kLong);
        x.copy_(p.reshape({-1}).index_select(0, perm).view_as(p));
      } else {
        continue;
      }
      std::memcpy(arena_.at(t.slot.call.inputs[i].offset), x.data_ptr(),
                  static_cast<size_t>(t.slot.call.inputs[i].bytes));
    }
    t.bound = ref_->bind(in_reference_order(t.slot.inputs), params_);
  }

  // What one timing of the bench shape works with and gathers, pass after pass.
  struct TimingRun {
    std::list<TimingSet> sets;  // stable addresses: slots are referenced by pointer
    std::vector<Slot*> all;     // every set's slot, in order: one pass calls each once
    Tensors base_in, base_exp;  // the one generated set every rotation set starts from
    int64_t set_bytes = 0;
    std::mt19937_64 rng{0};     // the new values of every pass
    double dry_ns = 0;          // the runner's own cost of a pass, on this clock
    std::vector<double> inside, outside;  // per pass: the runner's summed call times; this clock's, less dry_ns
    std::vector<double> waited;           // per pass: the runner's main thread and this one without a CPU (ns)
    bool late_threads = false;
    int reference_repeat = 1;  // KEVOLVE_TEST_REFERENCE_REPEAT (see reference_pass)
  };

  // Times the candidate against the reference on the bench shape, alternating passes, then checks the
  // evidence against this process's clock (check_times).
  std::optional<Verdict> time_bench() {
    TimingRun run;
    if (auto v = make_timing_sets(run)) return v;
    if (auto v = measure_runner_cost(run)) return v;
    // Warm-up (validated like timed runs), then alternate reference and candidate passes.
    for (int w = 0; w < opt_.warmup; w += static_cast<int>(run.all.size())) {
      reference_pass(run, nullptr);
      if (auto v = candidate_pass(run, nullptr)) return v;
    }
    std::vector<double> cand, ref;
    auto enough = [&](const std::vector<double>& s) {
      double total = 0;
      for (double x : s) total += x;
      return static_cast<int>(s.size()) >= opt_.max_reps ||
             (static_cast<int>(s.size()) >= opt_.min_reps && total >= opt_.min_time_s * 1e9);
    };
    // Timed up to three times while the evaluator's clock disagrees with the runner's: a burst of other work
    // on the machine passes, a forged clock or report does not (check_times judges the last attempt).
    for (int attempt = 1;; ++attempt) {
      timing_.attempts = attempt;
      cand.clear();
      ref.clear();
      ref_starved_ = 0;
      run.inside.clear();
      run.outside.clear();
      run.waited.clear();
      while (!enough(cand) || !enough(ref)) {
        reference_pass(run, enough(ref) ? nullptr : &ref);
        if (!enough(cand))
          if (auto v = candidate_pass(run, &cand)) return v;
      }
      if (attempt == 3 || !on(Detector::impossible_time) || !clocks_disagree(run.inside, run.outside, run.dry_ns))
        break;
    }
    res_.candidate = harness::summarize(cand, threads_);
    res_.reference = harness::summarize(ref, threads_);
    res_.speedup = res_.candidate.median_ms > 0 ? res_.reference.median_ms / res_.candidate.median_ms : 0;
    const auto bytes = harness::set_achieved_rates(res_, spec_, spec_.bench);
    const int64_t working_set = static_cast<int64_t>(run.sets.size()) * run.set_bytes;
    for (auto& t : run.sets) release(t.slot);
    run.sets.clear();  // before the copy below: its buffers take the memory the sets held, not more
    run.all.clear();
    run.base_in.clear();
    run.base_exp.clear();
    // The device's copy bandwidth for the diagnosis: a copy over the timing's working set with the
    // evaluation's threads, the floor the candidate's roofline bytes are placed against.
    const auto t_bw = Clock::now();
    if (bytes) res_.peak_gbps = copy_gbps(working_set);
    timing_.bandwidth = secs(t_bw, Clock::now());
    return check_times(run.inside, run.outside, run.waited, run.dry_ns, run.late_threads, bytes ? *bytes : 0,
                       working_set);
  }

  // Rotation sets: together larger than the last-level cache so no timed call finds its data warm.
  // One generated set (inputs and reference outputs) seeds every rotation set: with fresh_data each set
  // gets new values before every pass (refresh), so more generated sets would only cost time and memory;
  // without it every set holds the same data, as before.
  std::optional<Verdict> make_timing_sets(TimingRun& run) {
    const auto t_sets = Clock::now();
    if (auto v = make_data(spec_.bench, seed_for(spec_.verify.size(), 2000), run.base_in, run.base_exp)) return v;
    for (auto* v : {&run.base_in, &run.base_exp})
      for (auto& t : *v) run.set_bytes += t.numel() * t.element_size();
    const int64_t rotate = opt_.rotate_bytes > 0 ? opt_.rotate_bytes : 2 * harness::last_level_cache_bytes();
    const int64_t m = std::clamp<int64_t>((rotate + run.set_bytes - 1) / std::max<int64_t>(run.set_bytes, 1), 2, 64);
    for (int64_t i = 0; i < m; ++i) {
      TimingSet t;
      t.pristine = run.base_in;  // the data cache's tensors: read, never written
      Tensors in, exp;
      for (auto& x : run.base_in) in.push_back(x.clone());  // these values change with every pass
      for (auto& x : run.base_exp) exp.push_back(x.clone());
      // Snapshot places too, though timed batches take no snapshot: their pages are never touched (no
      // memory), and every set is laid out in the arena as a verification slot is.
      t.slot = make_slot(std::move(in), std::move(exp));
      t.bound = ref_->bind(in_reference_order(t.slot.inputs), params_);
      run.sets.push_back(std::move(t));
    }
    for (auto& t : run.sets) run.all.push_back(&t.slot);
    run.rng.seed(mix_seed(opt_.seed, 7001, 0));
    // Testing aid: KEVOLVE_TEST_REFERENCE_REPEAT=k (1..16) computes the reference k times per timed call,
    // a reference slower by a known factor, so that tests can check the speedup shows exactly that factor.
    // It can only lower a speedup, never raise one.
    const char* repeat_env = std::getenv("KEVOLVE_TEST_REFERENCE_REPEAT");
    run.reference_repeat = repeat_env ? std::clamp(std::atoi(repeat_env), 1, 16) : 1;
    timing_.sets_made = static_cast<int>(m);
    timing_.sets = secs(t_sets, Clock::now());
    return std::nullopt;
  }

  // The runner's own cost of a pass (poison, snapshots, thread counts, the pipes), on this clock: the
  // least of three passes that do everything but call the candidate.
  std::optional<Verdict> measure_runner_cost(TimingRun& run) {
    const auto t_dry = Clock::now();
    std::vector<double> d;
    for (int k = 0; k < 3; ++k) {
      std::vector<CallOutcome> out;
      const auto t0 = std::chrono::steady_clock::now();
      if (auto v = run_batch(run.all, out, "timing on the bench shape", kDry)) return v;
      d.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    run.dry_ns = *std::min_element(d.begin(), d.end());
    timing_.dry = secs(t_dry, Clock::now());
    return std::nullopt;
  }

  // One candidate pass: every set's call timed by the runner, each output checked at drawn positions
  // (timed_outputs). `samples` (none during warm-up) gets each call's time; the pass's evidence for
  // check_times goes to `run`.
  std::optional<Verdict> candidate_pass(TimingRun& run, std::vector<double>* samples) {
    const auto t_pass = Clock::now();
    ++timing_.passes;
    std::vector<CallOutcome> out;
    // Outputs are poisoned by a batch of their own, so the timed window holds only the calls; the
    // runner is stopped the moment it answers, so nothing it left running can still write the outputs
    // that are about to be checked.
    if (on(Detector::poison))
      if (auto v = run_batch(run.all, out, "timing on the bench shape", kDry | kPoison)) return v;
    // Both sides' waits for a CPU during the pass: the runner's main thread and this thread.
    const int64_t waited_before = runner_.waited_ns(), self_before = process::this_thread_waited_ns();
    const auto t0 = std::chrono::steady_clock::now();
    if (auto v = run_batch(run.all, out, "timing on the bench shape", 0u)) return v;
    const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    const int64_t waited_after = runner_.waited_ns(), self_after = process::this_thread_waited_ns();
    runner_.pause();
    const auto t_checks = Clock::now();
    double sum = 0;
    for (size_t i = 0; i < run.all.size(); ++i) {
      if (on(Detector::timed_outputs)) {
        if (auto v = check(*run.all[i], out[i], Phase::timed, "timed run on the bench shape", {})) return v;
      } else if (out[i].rc != 0) {
        return harness::nonzero_return(out[i].rc, "timed run on the bench shape");
      }
      sum += static_cast<double>(out[i].ns);
      run.late_threads |= out[i].late_threads > 0;
      if (samples) samples->push_back(static_cast<double>(out[i].ns));
    }
    timing_.checks += secs(t_checks, Clock::now());
    timing_.candidate += secs(t_pass, Clock::now());
    if (samples) {
      run.inside.push_back(sum);
      run.outside.push_back(wall - run.dry_ns);
      if (waited_before >= 0 && waited_after >= waited_before && self_before >= 0 && self_after >= self_before)
        run.waited.push_back(static_cast<double>((waited_after - waited_before) + (self_after - self_before)));
    }
    return std::nullopt;
  }

  // One reference pass: new values in every set (with fresh_data), then the reference on them: timed, the
  // runner stopped meanwhile, and its outputs become what the candidate's next pass is checked against.
  // A reference call during which this process's threads (its worker threads too) waited for a CPU for
  // over a quarter of the call was slowed by other work on the machine, not by its own cost, and a starved
  // reference inflates the speedup. It is taken again (three times at most, after a moment off the CPU),
  // the fastest take kept; one still starved counts its time less its threads' waits, which can only make
  // the reference faster (threads that waited at once are subtracted twice), never the speedup higher.
  void reference_pass(TimingRun& run, std::vector<double>* samples) {
    const bool fresh = on(Detector::fresh_data);
    runner_.pause();
    for (auto& t : run.sets) {
      const auto t_refresh = Clock::now();
      if (fresh) refresh(t, run.rng);
      const auto t_ref = Clock::now();
      timing_.refresh += secs(t_refresh, t_ref);
      double best_ns = 0, best_waited = 0;
      for (int take = 0; take < 4; ++take) {
        // Off the CPU for a moment before a retake: a woken sleeper is scheduled ahead of a busy neighbour.
        if (take > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const int64_t w0 = process::this_process_waited_ns();
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 1; r < run.reference_repeat; ++r) t.bound();
        auto outs = t.bound();
        const auto t1 = std::chrono::steady_clock::now();
        const int64_t w1 = process::this_process_waited_ns();
        if (fresh)
          for (size_t i = 0; i < outs.size() && i < t.slot.expected.size(); ++i) t.slot.expected[i].copy_(outs[i]);
        outs.clear();
        const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
        const double waited = w0 >= 0 && w1 >= w0 ? static_cast<double>(w1 - w0) : 0;
        if (take == 0 || ns < best_ns) {
          best_ns = ns;
          best_waited = waited;
        }
        if (!samples || best_waited <= 0.25 * best_ns) break;
      }
      if (samples) {
        if (best_waited > 0.25 * best_ns) {
          ++ref_starved_;
          best_ns = std::max(best_ns - best_waited, 0.05 * best_ns);
        }
        samples->push_back(best_ns);
      }
      timing_.reference += secs(t_ref, Clock::now());
    }
    runner_.resume();
  }

  // The timing's evidence checked against this process's own clock. A pass's time on the evaluator's
  // clock (less the runner's measured cost of a pass without calls) can only exceed the call times the
  // runner reported by scheduling noise; a runner whose clock was slowed, whose report was forged, or
  // whose candidate finished its work after returning reports much less. Medians over all passes, so
  // that one descheduled pass decides nothing. And no candidate moves the problem's bytes 4x faster than
  // this machine copies a working set of the same size.
  // Whether a pass's time on the evaluator's clock (medians) exceeds what the runner reported by more than
  // scheduling noise: room for a machine shared with other work, the runner descheduled between its calls.
  static bool clocks_disagree(const std::vector<double>& inside, const std::vector<double>& outside, double dry_ns) {
    if (inside.empty()) return false;
    return harness::median(outside) > 1.5 * harness::median(inside) + 2e6 + 0.5 * dry_ns;
  }

  std::optional<Verdict> check_times(const std::vector<double>& inside, const std::vector<double>& outside,
                                     const std::vector<double>& waited, double dry_ns, bool late_threads,
                                     double roofline_bytes, int64_t working_set) {
    if (!on(Detector::impossible_time) || inside.empty()) return std::nullopt;
    const double in = harness::median(inside), out = harness::median(outside);
    if (clocks_disagree(inside, outside, dry_ns)) {
      std::ostringstream os;
      os.precision(4);
      os << "a timed pass took " << out / 1e6
         << " ms on the evaluator's clock (less the runner's own cost) while the runner reported " << in / 1e6
         << " ms of calls";
      // A machine too busy to time on: the runner's main thread and this thread waited for a CPU for much of
      // the gap (the kernel's counts, read here). That makes the timing worthless, never the candidate good: it is a
      // harness error (retried by a search), not a pass. Else the gap has no innocent cause.
      if (!waited.empty()) {
        const double w = harness::median(waited);
        if (w > 0.75 * (out - in)) {
          os << ", and the runner and the evaluator waited " << w / 1e6
             << " ms for a CPU: this machine is too busy to time on (other work competes for its cores)";
          return Verdict{EvalStatus::harness_error, "busy", os.str(), ""};
        }
      }
      if (late_threads && on(Detector::escaped_work))
        return Verdict{EvalStatus::rejected, "escaped_work",
                       os.str() + ", and threads outlived the calls: work escaped the timer", ""};
      return Verdict{EvalStatus::rejected, "impossible_time",
                     os.str() + ": the runner's clock or its report cannot be trusted", ""};
    }
    if (roofline_bytes > 0 && res_.candidate.median_ms > 0) {
      double gbps = copy_gbps(working_set);
      // A copy measured while other work held the cores reads too slow, and the figure is kept for the
      // process: before refusing, it is measured again (a copy is never made faster than the machine).
      if (gbps > 0 && res_.candidate_gbps > 4 * gbps) gbps = copy_gbps(working_set, /*again=*/true);
      if (gbps > 0 && res_.candidate_gbps > 4 * gbps) {
        std::ostringstream os;
        os.precision(4);
        os << "the candidate would move the problem's " << roofline_bytes / 1e6 << " MB at " << res_.candidate_gbps
           << " GB/s, more than 4x this machine's copy bandwidth over the same working set (" << gbps
           << " GB/s): impossible";
        return Verdict{EvalStatus::rejected, "impossible_time", os.str(), ""};
      }
    }
    return std::nullopt;
  }

  // Copy bandwidth of this machine (bytes read + written per second, best of 3) over a working set as
  // large as the timing rotation's, with the evaluation's threads: caches then help a copy as much as they
  // help the candidate. Measured once per working-set size and evaluator process; `again` measures anew
  // (best of 10) and keeps the faster figure.
  double copy_gbps(int64_t working_set, bool again = false) {
    static std::map<int64_t, double> measured;
    const int64_t n = std::max<int64_t>(working_set / 2, int64_t(1) << 20);
    auto it = measured.find(n);
    if (it != measured.end() && !again) return it->second;
    at::Tensor a = at::ones({n}, at::kByte), b = at::empty({n}, at::kByte);
    b.copy_(a);
    double best = 1e30;
    for (int k = 0; k < (again ? 10 : 3); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      b.copy_(a);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double gbps = 2.0 * static_cast<double>(n) / best / 1e9;
    return measured[n] = it != measured.end() ? std::max(it->second, gbps) : gbps;
  }

  const EvalRequest& q_;
  const ProblemSpec& spec_;
  const EvalOptions& opt_;
  std::string runner_path_;
  EvalResult res_;
  Arena arena_;
  RunnerProcess runner_;
  const Reference* ref_ = nullptr;
  std::vector<double> params_;
  std::string spec_key_;  // identifies the spec's content in the data cache
  int threads_ = 1;
  int64_t ref_starved_ = 0;  // timed reference calls still starved after their retakes (time_bench)
  int generated_ = 0, cached_ = 0;  // data made (inputs and reference outputs) and taken from the cache
  double generate_s_ = 0;
  TimingPhases timing_;
  std::mt19937_64 positions_rng_{std::random_device{}()};  // where timed runs' outputs are checked
};

}  // namespace

EvalResult evaluate(const EvalRequest& request, const std::string& runner_path) {
  try {
    return Evaluation(request, runner_path).run();
  } catch (const std::exception& e) {
    EvalResult r;
    harness::apply_harness_error(r, std::string("evaluator error: ") + e.what());
    return r;
  }
}

}  // namespace kevolve::cpu
