#include "backends/cuda/evaluator/evaluate.hpp"

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "backends/cuda/device_names.hpp"
#include "backends/cuda/evaluator/device_arena.hpp"
#include "backends/cuda/evaluator/runner_process.hpp"
#include "backends/cuda/launch_spec.hpp"
#include "backends/harness/judge.hpp"
#include "backends/harness/stats.hpp"
#include "backends/harness/verify.hpp"
#include "backends/reference/eval_common.hpp"
#include "backends/reference/generators.hpp"
#include "backends/reference/reference_data.hpp"
#include "backends/reference/references.hpp"
#include "runtime/records/records_codec.hpp"

namespace kevolve::cuda {
namespace {

using namespace kevolve::reference;

// Facts about the device measured once per worker process.
struct DeviceFacts {
  std::string name, arch;
  int sms = 0;
  int64_t l2_bytes = 0;
  double copy_gbps = 0;  // device-to-device copy, bytes read + written
  std::string error;
};

const DeviceFacts& device_facts() {
  static const DeviceFacts f = [] {
    DeviceFacts d;
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
      d.error = no_device(e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
      return d;
    }
    cudaDeviceProp p{};
    if (cudaError_t e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess) {
      d.error = no_device(cudaGetErrorString(e));
      return d;
    }
    // The references run in this process's libtorch, on the same device: a libtorch without GPU support
    // (Debian's is CPU-only; AMD needs a ROCm build of torch) cannot make them.
    if (!at::hasCUDA()) {
      d.error = std::string("this ") + kEvaluatorName + " links a libtorch without " + kGpuApi +
                " support, so the references cannot run on the " + p.name + ": " + kTorchHint;
      return d;
    }
    d.name = p.name;
    d.arch = device_arch(p);
    d.sms = p.multiProcessorCount;
    d.l2_bytes = p.l2CacheSize;
    // Copy ceiling: a 1 GiB device-to-device copy, median of 5 after a warm-up.
    const size_t bytes = size_t(1) << 30;
    void *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess) {
      cudaMemset(a, 1, bytes);
      cudaEvent_t s, e;
      cudaEventCreate(&s);
      cudaEventCreate(&e);
      std::vector<double> ms;
      for (int i = 0; i < 6; ++i) {
        cudaEventRecord(s, 0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e, 0);
        cudaEventSynchronize(e);
        float t = 0;
        cudaEventElapsedTime(&t, s, e);
        if (i) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      d.copy_gbps = 2.0 * static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e-3) / 1e9;
      cudaEventDestroy(s);
      cudaEventDestroy(e);
    }
    if (a) cudaFree(a);
    if (b) cudaFree(b);
    return d;
  }();
  return f;
}

DeviceArena& arena() {
  static DeviceArena a;
  return a;
}

// The runner prepared for the next candidate (runner_protocol.hpp: Setup, then Load): begun when an
// evaluation ends, so that its process, confinement and device context are made while the verdict travels
// and the next candidate is built. `key` says what it was begun with; another request starts a fresh one.
// KEVOLVE_CUDA_STANDBY=0 turns it off (every evaluation starts its runner itself, as before).
struct Standby {
  std::unique_ptr<CudaRunnerProcess> runner;
  std::string key;
};
Standby& standby() {
  static Standby s;
  return s;
}
bool standby_on() {
  const char* e = std::getenv("KEVOLVE_CUDA_STANDBY");
  return !(e && std::string(e) == "0");
}

// One call's data. `inputs` and `expected` are the evaluator's private device tensors (the worker's data
// cache holds them; nothing writes to them); `call` places copies of the inputs, and room for the outputs
// and their snapshots, in the arena the runner sees.
struct Slot {
  Tensors inputs;    // the originals, on the device
  Tensors expected;  // the reference's outputs, on the device
  Call call;
};

// Where an evaluation's time goes inside its phases, summed over the phase (seconds).
struct PhaseTimes {
  double data = 0;       // inputs and references: generated, or taken from the worker's cache
  double copies = 0;     // inputs copied into the arena (device to device)
  double runner = 0;     // runner batches: the request, the candidate's calls, the reply
  double checks = 0;     // outputs and inputs compared with the reference and the originals
  double reference = 0;  // the reference's timed calls
};

using harness::Phase;
using harness::Verdict;

class Evaluation {
 public:
  Evaluation(const EvalRequest& q, std::string runner)
      : q_(q), spec_(q.spec), opt_(q.options), runner_path_(std::move(runner)) {}

  EvalResult run() {
    t0_ = Clock::now();
    res_.detectors = opt_.detectors;
    const DeviceFacts& dev = device_facts();
    if (!dev.error.empty()) return harness_error(dev.error);
    res_.device = dev.name + " (" + dev.arch + ")";
    res_.peak_gbps = dev.copy_gbps;
    res_.sms = dev.sms;
    res_.l2_bytes = dev.l2_bytes;
    ref_ = find_reference(spec_.reference);
    if (!ref_) return harness_error("no reference named '" + spec_.reference + "' is registered in this evaluator");
    for (auto& p : spec_.params) params_.push_back(p.value);
    {
      wire::Writer w;
      encode(w, spec_);
      spec_key_ = std::string(kBackendName) + "|" +
                  std::to_string(std::hash<std::string>{}(std::string(w.bytes().begin(), w.bytes().end())));
    }
    if (opt_.trials < 5)
      return harness_error("at least 5 verification trials are required (got " + std::to_string(opt_.trials) + ")");
    if (!kHostCodeCandidates && !is_kernel_image(q_.artifact))
      return harness_error(std::string(kGpuApi) +
                           " candidates are kernel-only here (a code object with launch lines); " + q_.artifact +
                           " is not one");
    if (arena().size() == 0) {
      const char* mb = std::getenv("KEVOLVE_CUDA_ARENA_MB");
      if (auto a = arena().create((mb ? std::atoll(mb) : 32768) << 20); !a) return harness_error(a.message);
    }
    Setup& s = setup_;
    s.ipc_handle = arena().ipc_handle();
    s.arena_bytes = arena().size();
    s.flush_bytes = flush_bytes_for(dev.l2_bytes);
    flush_bytes_ = s.flush_bytes;
    runner_key_ = runner_path_ + "|" + std::to_string(opt_.memory_limit_mb) + "|" + std::to_string(s.flush_bytes) +
                  "|" + std::to_string(s.device_memory_cap_mb) + "|" + std::to_string(s.arena_bytes);
    Load load;
    {
      std::ifstream f(q_.artifact, std::ios::binary);
      load.bytes.assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (!f.good() && !f.eof()) load.bytes.clear();
      if (load.bytes.empty()) return harness_error("cannot read the candidate's file " + q_.artifact);
    }
    if (is_kernel_image(q_.artifact)) {
      std::ifstream f(q_.artifact + ".launch");
      std::stringstream text;
      text << f.rdbuf();
      auto l = parse_launch_spec(text.str());
      if (!l) return harness_error("the launch description beside the kernel image: " + l.error());
      launch_ = *l;
      load.kind = ArtifactKind::cubin;
      load.entry = launch_->kernel;
    } else {
      load.kind = ArtifactKind::shared_object;
      load.entry = q_.entry.empty() ? spec_.entry : q_.entry;
    }
    Hello h;
    RunnerFailure f;
    if (!start_runner(f)) return fail(f, "starting the runner");
    if (!runner_->load(load, std::max(60.0, opt_.call_timeout_s), h, f)) return fail(f, "loading the candidate");
    sms_ = h.sms;
    res_.sandbox = h.sandbox;
    const auto loaded = Clock::now();

    const auto shapes = harness::shapes_to_verify(spec_, spec_.bench_for(kBackendName));
    for (size_t i = 0; i < shapes.size(); ++i)
      if (auto v = verify_shape(i, shapes[i].first, shapes[i].second)) return finish(*v);
    res_.shapes = static_cast<int>(shapes.size());
    res_.trials = opt_.trials;
    const auto verified = Clock::now();
    const PhaseTimes in_verify = times_;
    times_ = PhaseTimes{};
    if (auto v = time_bench()) return finish(*v);
    {
      std::ostringstream ph;
      ph.precision(3);
      ph << "evaluation phases: start-up and load " << seconds(t0_, loaded)
         << (standby_used_ ? " s (a runner prepared before the candidate came" : " s (a runner started for it")
         << (prepared_.empty() ? "" : ": " + prepared_) << ")"
         << ", verification " << seconds(loaded, verified) << " s (" << phase_text(in_verify) << "), timing "
         << seconds(verified, Clock::now()) << " s (" << phase_text(times_) << "); inputs and references generated "
         << generated_ << " times in " << generate_s_ << " s, taken from the worker's cache " << cached_ << " times\n";
      res_.profile += ph.str();
    }
    res_.status = EvalStatus::ok;
    res_.reason.clear();
    std::ostringstream os;
    os.precision(4);
    os << harness::correct_message(res_);
    if (res_.candidate_gbps > 0 && res_.peak_gbps > 0)
      os << "; " << res_.candidate_gbps << " GB/s = " << 100 * res_.candidate_gbps / res_.peak_gbps
         << "% of the measured copy bandwidth";
    res_.message = os.str();
    res_.runner_log = runner_log();
    return res_;
  }

 private:
  bool on(Detector d) const { return opt_.detectors.on(d); }

  // A prepared runner for this evaluation: the standby when it was begun with the same setup and is
  // alive, else a fresh one. A standby that died before its candidate came is no candidate's failure: a
  // fresh runner replaces it.
  bool start_runner(RunnerFailure& f) {
    const double timeout = std::max(60.0, opt_.call_timeout_s);
    Hello ready;
    Standby& sb = standby();
    if (sb.runner && sb.key == runner_key_) {
      runner_ = std::move(sb.runner);
      if (runner_->ready(timeout, ready, f)) {
        standby_used_ = true;
        prepared_ = ready.prepared;
        return true;
      }
    }
    sb.runner.reset();
    runner_ = std::make_unique<CudaRunnerProcess>();
    const bool ok = runner_->begin(runner_path_, setup_, opt_.memory_limit_mb, f) && runner_->ready(timeout, ready, f);
    prepared_ = ready.prepared;
    return ok;
  }

 public:
  // Ends this evaluation's runner and begins the next candidate's (the standby), with this evaluation's
  // setup. Call once the verdict is made.
  void hand_over() {
    runner_.reset();
    if (!standby_on() || runner_key_.empty() || setup_.ipc_handle.empty()) return;
    auto next = std::make_unique<CudaRunnerProcess>();
    RunnerFailure f;
    if (!next->begin(runner_path_, setup_, opt_.memory_limit_mb, f)) return;  // the next evaluation starts its own
    standby().runner = std::move(next);
    standby().key = runner_key_;
  }

 private:
  std::string runner_log() { return runner_ ? runner_->log_tail() : ""; }

  EvalResult harness_error(const std::string& m) {
    harness::apply_harness_error(res_, m);
    return res_;
  }
  // The result of an evaluation its runner failed `during` (starting, loading): the runner's own verdict.
  EvalResult fail(const RunnerFailure& f, const std::string& during) {
    harness::apply(res_, Verdict{f.status, f.reason, f.message + (during.empty() ? "" : " (" + during + ")"), ""});
    res_.runner_log = runner_log();
    return res_;
  }
  EvalResult finish(const Verdict& v) {
    harness::apply(res_, v);
    res_.runner_log = runner_log();
    return res_;
  }

  static std::string phase_text(const PhaseTimes& t) {
    std::ostringstream o;
    o.precision(3);
    o << "data " << t.data << " s, copies " << t.copies << " s, runner batches " << t.runner << " s, checks "
      << t.checks << " s";
    if (t.reference > 0) o << ", reference calls " << t.reference << " s";
    return o.str();
  }

  // Adds the time `f` takes to `acc`; returns what `f` returns.
  template <class F>
  static auto timed(double& acc, F&& f) {
    struct Add {
      double& acc;
      Clock::time_point t0 = Clock::now();
      ~Add() { acc += seconds(t0, Clock::now()); }
    } add{acc};
    return f();
  }

  // The inputs and the reference's outputs of one trial, as device tensors (made on the device, kept in the
  // worker's cache: a trial's data never crosses the host bus twice).
  std::optional<Verdict> make_data(const ShapeBinding& shape, uint64_t seed, Tensors& inputs, Tensors& expected) {
    return timed(times_.data, [&] { return make_data_untimed(shape, seed, inputs, expected); });
  }
  std::optional<Verdict> make_data_untimed(const ShapeBinding& shape, uint64_t seed, Tensors& inputs,
                                           Tensors& expected) {
    const std::string key = spec_key_ + "|" + shape_string(shape) + "|" + std::to_string(seed);
    if (DataCache::instance().get(key, inputs, expected)) {
      ++cached_;
      return std::nullopt;
    }
    const auto g0 = Clock::now();
    ++generated_;
    if (auto f = make_trial_data(spec_, *ref_, params_, shape, seed, at::Device(at::kCUDA, 0), inputs, expected))
      return Verdict{EvalStatus::harness_error, f->part, f->message, ""};
    cudaDeviceSynchronize();
    DataCache::instance().put(key, inputs, expected);
    generate_s_ += seconds(g0, Clock::now());
    return std::nullopt;
  }

  // Copies of `inputs`, in the order the reference takes them (matched by name).
  Tensors for_reference(const Tensors& inputs) const {
    Tensors out = reference::in_reference_order(spec_, *ref_, inputs);
    for (auto& t : out) t = t.clone();
    return out;
  }

  uint64_t seed_for(size_t shape_index, uint64_t k) const {
    return mix_seed(opt_.seed, shape_index, on(Detector::fresh_data) ? k : 0);
  }

  // Places a tensor in the arena (inputs: copied; outputs: space + snapshot). Throws when full.
  GpuTensor place(const at::Tensor& t, bool output) {
    GpuTensor g;
    g.bytes = t.numel() * t.element_size();
    g.offset = arena().allocate(g.bytes);
    if (g.offset < 0) throw std::runtime_error("the device arena is full (KEVOLVE_CUDA_ARENA_MB)");
    g.dtype = static_cast<int32_t>(dtype_from(t.scalar_type()));
    for (int64_t d = 0; d < t.dim(); ++d) {
      g.shape.push_back(t.size(d));
      g.strides.push_back(t.stride(d));
    }
    if (t.dim() == 0) {
      g.shape.push_back(1);
      g.strides.push_back(1);
    }
    if (output) {
      g.snapshot_offset = arena().allocate(g.bytes);
      if (g.snapshot_offset < 0) throw std::runtime_error("the device arena is full (KEVOLVE_CUDA_ARENA_MB)");
    } else {
      timed(times_.copies, [&] {
        return cudaMemcpy(arena().at(g.offset), t.data_ptr(), static_cast<size_t>(g.bytes), cudaMemcpyDefault);
      });
    }
    return g;
  }

  std::optional<Verdict> make_slot(Tensors inputs, Tensors expected, const ShapeBinding& shape, Slot& s) {
    s.inputs = std::move(inputs);
    s.expected = std::move(expected);
    for (auto& t : s.inputs) s.call.inputs.push_back(place(t, false));
    for (auto& t : s.expected) s.call.outputs.push_back(place(t, true));
    return set_launch(s, shape);
  }

  // The arena range at `offset` as a device tensor shaped like `like`.
  static at::Tensor view(int64_t offset, const at::Tensor& like) {
    return at::from_blob(arena().at(offset), like.sizes(),
                         at::TensorOptions().device(at::kCUDA).dtype(like.scalar_type()));
  }

  std::optional<Verdict> set_launch(Slot& s, const ShapeBinding& shape) {
    if (!launch_) return std::nullopt;
    ShapeBinding sym = shape;
    auto d = resolve_launch(*launch_, sym, sms_);
    if (!d)
      return Verdict{EvalStatus::runtime_error, "launch",
                     "the launch description does not fit shape (" + shape_string(shape) + "): " + d.error(), ""};
    for (int i = 0; i < 3; ++i) {
      s.call.launch.grid[i] = d->grid[i];
      s.call.launch.block[i] = d->block[i];
    }
    s.call.launch.smem = d->smem;
    return std::nullopt;
  }

  void release(const Slot& s) {
    for (auto& t : s.call.inputs) arena().release(t.offset);
    for (auto& t : s.call.outputs) {
      arena().release(t.offset);
      arena().release(t.snapshot_offset);
    }
  }

  std::optional<Verdict> run_batch(const std::vector<Slot*>& slots, uint32_t flags, BatchReply& out,
                                   const std::string& during) {
    Batch b;
    b.flags = flags;
    b.params = params_;
    for (auto* s : slots) b.calls.push_back(s->call);
    RunnerFailure f;
    // The copies into the arena are queued on this process's streams: done before the runner reads them.
    cudaDeviceSynchronize();
    const bool ran = timed(times_.runner, [&] {
      return runner_->run(b, opt_.call_timeout_s * static_cast<double>(std::max<size_t>(slots.size(), 1)) + 10, out, f);
    });
    if (!ran) return Verdict{f.status, f.reason, f.message + " (" + during + ")", during};
    for (auto& c : out.calls)
      if (c.rc != 0)
        return Verdict{EvalStatus::runtime_error, c.rc == -3 ? "launch" : "return_code", c.error + " (" + during + ")",
                       during};
    return std::nullopt;
  }

  uint32_t verify_flags() const {
    return (on(Detector::poison) ? kPoison : 0u) | (on(Detector::escaped_work) ? kSnapshot : 0u);
  }

  static std::vector<char> download(int64_t offset, int64_t bytes) {
    std::vector<char> h(static_cast<size_t>(bytes));
    cudaMemcpy(h.data(), arena().at(offset), static_cast<size_t>(bytes), cudaMemcpyDeviceToHost);
    return h;
  }

  // Every check of one finished call, on host copies (the detailed report).
  std::optional<Verdict> check(const Slot& s, Phase phase, const std::string& where,
                               const std::vector<const Tensors*>& earlier) {
    return timed(times_.checks, [&] { return check_untimed(s, phase, where, earlier); });
  }
  std::optional<Verdict> check_untimed(const Slot& s, Phase phase, const std::string& where,
                                       const std::vector<const Tensors*>& earlier) {
    if (on(Detector::input_mutation))
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const auto& t = s.call.inputs[i];
        const at::Tensor original = s.inputs[i].cpu();
        if (std::memcmp(download(t.offset, t.bytes).data(), original.data_ptr(), static_cast<size_t>(t.bytes)) != 0)
          return harness::input_mutated(spec_.inputs[i].name, where);
      }
    for (size_t i = 0; i < s.expected.size(); ++i) {
      const auto& t = s.call.outputs[i];
      const std::string& name = spec_.outputs[i].name;
      const auto got = download(t.offset, t.bytes);
      if (on(Detector::escaped_work) && t.snapshot_offset >= 0 &&
          std::memcmp(got.data(), download(t.snapshot_offset, t.bytes).data(), got.size()) != 0)
        return Verdict{EvalStatus::rejected, "escaped_work",
                       "output '" + name +
                           "' was still changing after the timed stream's end event: work escaped to another stream (" +
                           where + ")",
                       where};
      const DType d = spec_.outputs[i].dtype;
      const Tolerance tol = spec_.tolerances.at(d);
      const int64_t n = s.expected[i].numel();
      const at::Tensor expected = s.expected[i].cpu();
      const auto rep = harness::compare(got.data(), expected.data_ptr(), d, n,
                                        harness::CompareOptions{tol, on(Detector::poison), on(Detector::magnitude)});
      const harness::OutputCheck c{
          name, where, phase, [&](int64_t flat) { return index_string(s.expected[i], flat); }, [&] {
            for (auto* e : earlier)
              if (harness::matches(got.data(), (*e)[i].cpu().data_ptr(), d, n, tol)) return true;
            return false;
          }};
      if (auto v = harness::judge_output(rep, c, res_)) return v;
    }
    return std::nullopt;
  }

  // The checks of check() on the device, for a call that passes them all (the common case): inputs
  // unchanged, outputs equal to their snapshot, within tolerance elementwise and in relative L2, no NaN.
  // False sends the call to check(), which finds and words the verdict on host copies. `stats` records the
  // largest error and where it is, as check() does.
  bool fast_ok(const Slot& s, bool stats) {
    return timed(times_.checks, [&] { return fast_ok_untimed(s, stats); });
  }
  bool fast_ok_untimed(const Slot& s, bool stats) {
    if (on(Detector::input_mutation))
      for (size_t i = 0; i < s.inputs.size(); ++i)
        if (!at::equal(view(s.call.inputs[i].offset, s.inputs[i]), s.inputs[i])) return false;
    for (size_t i = 0; i < s.expected.size(); ++i) {
      const auto& t = s.call.outputs[i];
      auto out = view(t.offset, s.expected[i]);
      if (on(Detector::escaped_work) && t.snapshot_offset >= 0 &&
          !at::equal(out, view(t.snapshot_offset, s.expected[i])))
        return false;
      const at::Tensor& exp = s.expected[i];
      if (!s.expected[i].is_floating_point()) {
        if (!at::equal(out, exp)) return false;
        continue;
      }
      const Tolerance tol = spec_.tolerances.at(spec_.outputs[i].dtype);
      auto o64 = out.to(at::kDouble), e64 = exp.to(at::kDouble);
      if (!at::isfinite(e64).all().item<bool>()) return false;  // the reference has NaN/Inf: host rules apply
      auto err = (o64 - e64).abs();
      if (!(err <= tol.atol + tol.rtol * e64.abs()).all().item<bool>()) return false;  // NaN compares false
      if (on(Detector::magnitude)) {
        const double ref2 = e64.norm().item<double>();
        const double rel = ref2 > 0 ? err.norm().item<double>() / ref2 : err.norm().item<double>();
        if (rel > harness::magnitude_bound(tol)) return false;
      }
      if (stats && err.numel() > 0) {
        const int64_t worst = err.reshape({-1}).argmax().item<int64_t>();
        const double max_abs = err.reshape({-1})[worst].item<double>();
        if (max_abs >= res_.max_abs_err) {
          res_.max_abs_err = max_abs;
          res_.where = "output '" + spec_.outputs[i].name + "' at " + index_string(s.expected[i], worst);
        }
        auto rel = err / e64.abs().clamp_min(1e-30);
        res_.max_rel_err =
            std::max(res_.max_rel_err, at::where(err > 0, rel, at::zeros_like(rel)).max().item<double>());
      }
    }
    return true;
  }

  std::optional<Verdict> verify_shape(size_t index, const std::string& label, const ShapeBinding& shape) {
    std::vector<Tensors> earlier;
    std::optional<Slot> first;
    for (int t = 0; t < opt_.trials; ++t) {
      Tensors in, exp;
      if (auto v = make_data(shape, seed_for(index, static_cast<uint64_t>(t)), in, exp)) return v;
      Slot s;
      if (auto v = make_slot(std::move(in), std::move(exp), shape, s)) {
        release(s);
        return v;
      }
      const std::string where = label + " (" + shape_string(shape) + "), trial " + std::to_string(t);
      BatchReply out;
      std::optional<Verdict> v = run_batch({&s}, verify_flags(), out, where);
      std::vector<const Tensors*> prev;
      for (auto& e : earlier) prev.push_back(&e);
      if (!v && !fast_ok(s, true)) v = check(s, Phase::verify, where, prev);
      if (v) {
        release(s);
        if (first) release(*first);
        return v;
      }
      earlier.push_back(s.expected);
      if (t == 0)
        first = std::move(s);
      else
        release(s);
    }
    std::optional<Verdict> v;
    if (on(Detector::pointer_reuse)) {
      Tensors in, exp;
      if (auto e = make_data(shape, seed_for(index, 1000), in, exp)) v = e;
      bool same = !v && in.size() == first->inputs.size();
      for (size_t i = 0; same && i < in.size(); ++i) same = in[i].sizes() == first->inputs[i].sizes();
      if (same) {
        Slot s;
        s.inputs = in;
        s.expected = exp;
        for (size_t i = 0; i < in.size(); ++i) {
          GpuTensor g = first->call.inputs[i];
          timed(times_.copies, [&] {
            return cudaMemcpy(arena().at(g.offset), in[i].data_ptr(), static_cast<size_t>(g.bytes), cudaMemcpyDefault);
          });
          s.call.inputs.push_back(g);
        }
        for (auto& t : exp) s.call.outputs.push_back(place(t, true));
        v = set_launch(s, shape);
        const std::string where = label + " (" + shape_string(shape) + "), trial 0's buffers refilled";
        BatchReply out;
        if (!v) v = run_batch({&s}, verify_flags(), out, where);
        if (!v && !fast_ok(s, true)) v = check(s, Phase::refill, where, {&first->expected});
        for (auto& t : s.call.outputs) {
          arena().release(t.offset);
          arena().release(t.snapshot_offset);
        }
      }
    }
    if (first) release(*first);
    return v;
  }

  std::optional<Verdict> time_bench() {
    const ShapeBinding& bench = spec_.bench_for(kBackendName);
    const size_t index = spec_.verify.size();
    std::vector<Slot> sets(2);  // two data sets alternate; the L2 is flushed before every timed call anyway
    std::vector<BoundReference> bound;
    std::optional<Verdict> v;
    for (size_t i = 0; i < sets.size() && !v; ++i) {
      Tensors in, exp;
      if ((v = make_data(bench, seed_for(index, 2000 + i), in, exp))) break;
      bound.push_back(ref_->bind(for_reference(in), params_));
      v = make_slot(std::move(in), std::move(exp), bench, sets[i]);
    }
    if (!v) v = time_loop(sets, bound);
    for (auto& s : sets) release(s);
    return v;
  }

  std::optional<Verdict> time_loop(std::vector<Slot>& sets, std::vector<BoundReference>& bound) {
    std::vector<Slot*> all;
    for (auto& s : sets) all.push_back(&s);
    const uint32_t timed =
        kFlush | (on(Detector::poison) ? kPoison : 0u) | (on(Detector::escaped_work) ? kSnapshot : 0u);
    // Every timed call's outputs are checked in the first passes, then in every 4th pass (a check costs
    // more than a short kernel; which passes are checked is not known to the candidate).
    int passes = 0;
    auto candidate_pass = [&](std::vector<double>* samples) -> std::optional<Verdict> {
      BatchReply out;
      if (auto v = run_batch(all, timed, out, "timing on the bench shape")) return v;
      const bool checked = passes < 4 || passes % 4 == 0;
      ++passes;
      for (size_t i = 0; i < all.size(); ++i) {
        if (checked && (on(Detector::timed_outputs) || on(Detector::escaped_work)) && !fast_ok(*all[i], false)) {
          if (auto v = check(*all[i], Phase::timed, "timed run on the bench shape", {})) return v;
          return Verdict{EvalStatus::rejected, "timed_outputs",
                         "a timed run's outputs differ from the reference or changed after the end event", ""};
        }
        if (samples) samples->push_back(static_cast<double>(out.calls[i].ns));
      }
      return std::nullopt;
    };
    void* flush = nullptr;
    cudaMalloc(&flush, static_cast<size_t>(flush_bytes_));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    int flushes = 0;
    auto reference_pass = [&](std::vector<double>* samples) {
      const auto r0 = Clock::now();
      for (auto& r : bound) {
        if (flush) cudaMemsetAsync(flush, ++flushes & 0xff, static_cast<size_t>(flush_bytes_), 0);
        cudaEventRecord(e0, 0);
        auto outs = r();
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        outs.clear();
        if (samples) samples->push_back(ms * 1e6);
      }
      times_.reference += seconds(r0, Clock::now());
    };
    std::optional<Verdict> v;
    for (int w = 0; w < std::max(1, opt_.warmup) && !v; w += static_cast<int>(all.size())) {
      v = candidate_pass(nullptr);
      reference_pass(nullptr);
    }
    std::vector<double> cand, ref;
    // Events time one launch to well under a microsecond, so the GPU needs fewer runs than the CPU: at
    // least min_reps, then until min_time of measured kernel time or until the side's median is settled
    // (its 95 % interval within ±timing_settle()), at most min(max_reps, kMaxGpuReps) per side.
    constexpr int kMaxGpuReps = 300;
    const double settle = harness::timing_settle();
    auto enough = [&](const std::vector<double>& s) {
      double total = 0;
      for (double x : s) total += x;
      const int n = static_cast<int>(s.size());
      return n >= std::min(opt_.max_reps, kMaxGpuReps) ||
             (n >= opt_.min_reps && (total >= opt_.min_time_s * 1e9 || harness::median_settled(s, settle)));
    };
    while (!v && (!enough(cand) || !enough(ref))) {
      if (!enough(cand)) v = candidate_pass(&cand);
      if (!v && !enough(ref)) reference_pass(&ref);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (flush) cudaFree(flush);
    if (v) return v;
    res_.candidate = harness::summarize(cand, 1);
    res_.reference = harness::summarize(ref, 1);
    if (on(Detector::escaped_work))
      if (auto w = wall_check(all)) return w;
    res_.speedup = res_.candidate.median_ms > 0 ? res_.reference.median_ms / res_.candidate.median_ms : 0;
    harness::set_achieved_rates(res_, spec_, spec_.bench_for(kBackendName));
    std::ostringstream p;
    p.precision(4);
    p << "device: " << res_.device << ", measured copy bandwidth " << res_.peak_gbps << " GB/s\n";
    if (res_.candidate_gbps > 0)
      p << "achieved: " << res_.candidate_gbps << " GB/s (" << 100 * res_.candidate_gbps / std::max(1.0, res_.peak_gbps)
        << "% of copy), " << res_.candidate_gflops << " GFLOP/s\n";
    p << "event timing: median " << res_.candidate.median_ms << " ms, p10 " << res_.candidate.p10_ms << ", p90 "
      << res_.candidate.p90_ms << " (" << res_.candidate.samples << " runs, L2 flushed before each; reference "
      << res_.reference.samples << " runs; each side timed until min_time";
    if (settle > 0) p << " or its median settled to +-" << settle * 100 << " %";
    p << ")\n";
    res_.profile = p.str();
    return std::nullopt;
  }

  // Work hidden on another stream makes the events look fast; a wall-clock batch ending in a device
  // synchronisation cannot be fooled. Compares it (minus the batch's own poison/flush cost) with the events.
  // A wall clock can be slowed by the host (a descheduled evaluator, a clock ramp), never sped up: the
  // check is made up to three times and the least time per call is judged, so hidden work is caught every
  // time and an honest kernel is not refused for one slow batch.
  std::optional<Verdict> wall_check(std::vector<Slot*>& all) {
    std::vector<Slot*> batch;
    for (int r = 0; r < 10; ++r)
      for (auto* s : all) batch.push_back(s);
    const uint32_t base = kWall | kFlush | (on(Detector::poison) ? kPoison : 0u);
    const double event_ms = res_.candidate.median_ms;
    const double bound_ms = 1.5 * event_ms + 0.02;
    double least_ms = -1;
    for (int attempt = 0; attempt < 3 && (least_ms < 0 || least_ms > bound_ms); ++attempt) {
      BatchReply with, without;
      if (auto v = run_batch(batch, base, with, "wall-clock check")) return v;
      if (auto v = run_batch(batch, base | kNoLaunch, without, "wall-clock check")) return v;
      const double per_call_ms =
          std::max(0.0, static_cast<double>(with.wall_ns - without.wall_ns)) / 1e6 / static_cast<double>(batch.size());
      least_ms = least_ms < 0 ? per_call_ms : std::min(least_ms, per_call_ms);
    }
    if (least_ms > bound_ms)
      return Verdict{EvalStatus::rejected, "escaped_work",
                     "wall-clock time per call " + std::to_string(least_ms) +
                         " ms (the least of 3 batches, each ending in a device synchronisation) vs " +
                         std::to_string(event_ms) +
                         " ms by the events on the timed stream: the kernel's work escaped the timed stream",
                     ""};
    return std::nullopt;
  }

  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }

  Clock::time_point t0_;
  PhaseTimes times_;
  int generated_ = 0, cached_ = 0;
  double generate_s_ = 0;
  const EvalRequest& q_;
  const ProblemSpec& spec_;
  const EvalOptions& opt_;
  std::string runner_path_;
  EvalResult res_;
  std::unique_ptr<CudaRunnerProcess> runner_;
  Setup setup_;  // what this evaluation's runner was begun with
  bool standby_used_ = false;
  std::string prepared_;    // what preparing the runner took, in its words
  std::string runner_key_;  // the same, as the standby's key
  const Reference* ref_ = nullptr;
  std::optional<LaunchSpec> launch_;
  std::vector<double> params_;
  std::string spec_key_;
  int sms_ = 0;
  int64_t flush_bytes_ = 0;
};

}  // namespace

EvalResult evaluate(const EvalRequest& request, const std::string& runner_path) {
  try {
    Evaluation e(request, runner_path);
    EvalResult r = e.run();
    e.hand_over();
    return r;
  } catch (const std::exception& e) {
    EvalResult r;
    harness::apply_harness_error(r, std::string("evaluator error: ") + e.what());
    return r;
  }
}

}  // namespace kevolve::cuda
