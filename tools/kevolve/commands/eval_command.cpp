#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/commands/eval_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backends/backend.hpp"
#include "runtime/core/json.hpp"
#include "tools/kevolve/setup/problem_lookup.hpp"
#include "runtime/config/problem_loader.hpp"

namespace kevolve::cli {
namespace {

struct EvalArgs {
  std::string problem, candidate, entry, backend = "cpu";
  std::vector<std::string> roots, detectors_off;
  bool json = false;
  EvalOptions options;
};

void print_human(const ProblemSpec& p, const EvalResult& r) {
  std::cout << "problem:    " << p.name << " (" << p.file << ")\n";
  std::cout << "status:     " << status_name(r.status);
  if (!r.reason.empty() && r.status != EvalStatus::ok) std::cout << " [" << r.reason << "]";
  std::cout << "\n";
  if (!r.message.empty()) std::cout << "message:    " << r.message << "\n";
  if (r.status == EvalStatus::ok || r.status == EvalStatus::incorrect || r.status == EvalStatus::rejected)
    std::cout << "max error:  abs " << r.max_abs_err << ", rel " << r.max_rel_err
              << (r.where.empty() ? "" : " at " + r.where) << "\n";
  if (r.status == EvalStatus::ok) {
    std::cout.precision(4);
    std::cout << "reference:  median " << r.reference.median_ms << " ms (p10 " << r.reference.p10_ms << ", p90 "
              << r.reference.p90_ms << ", " << r.reference.samples << " runs, " << r.reference.threads << " threads)\n";
    std::cout << "candidate:  median " << r.candidate.median_ms << " ms (p10 " << r.candidate.p10_ms << ", p90 "
              << r.candidate.p90_ms << ", " << r.candidate.samples << " runs, " << r.candidate.threads << " threads)\n";
    std::cout << "speedup:    " << r.speedup << "x over libtorch\n";
    if (r.candidate_gbps > 0 || r.candidate_gflops > 0)
      std::cout << "achieved:   " << r.candidate_gbps << " GB/s, " << r.candidate_gflops
                << " GFLOP/s (from the spec's roofline bytes/flops)\n";
    if (!r.device.empty()) std::cout << "device:     " << r.device << "\n";
    if (!r.kind.empty())
      std::cout << "kind:       " << r.kind
                << " (kernel: brings its own kernel code; framework: rearranges PyTorch calls)\n";
    if (r.compile_speedup > 0)
      std::cout << "vs compile: " << r.compile_speedup << "x over torch.compile of the reference\n";
  }
  std::cout << "sandbox:    " << (r.sandbox.empty() ? "none reported by this backend" : r.sandbox) << "\n";
  if (!r.profile.empty()) std::cout << "profile:\n" << r.profile << "\n";
  if (r.evaluator_peak_rss_mb > 0)
    std::cout << "evaluator peak memory: " << static_cast<int64_t>(r.evaluator_peak_rss_mb) << " MiB (its data cache included)\n";
  if (r.status == EvalStatus::compile_error) std::cout << "compiler output:\n" << r.compile_log << "\n";
  if (!r.runner_log.empty() && r.status != EvalStatus::ok) std::cout << "candidate stderr:\n" << r.runner_log << "\n";
  if (!r.detectors.all_on()) {
    std::cout << "WARNING:    detectors switched off:";
    for (uint32_t i = 0; i < static_cast<uint32_t>(Detector::count_); ++i)
      if (!r.detectors.on(static_cast<Detector>(i))) std::cout << " " << detector_name(static_cast<Detector>(i));
    std::cout << " (this verdict cannot be trusted)\n";
  }
}

void print_json(const ProblemSpec& p, const EvalResult& r) {
  using json::number;
  using json::quote;
  std::string off;
  for (uint32_t i = 0; i < static_cast<uint32_t>(Detector::count_); ++i)
    if (!r.detectors.on(static_cast<Detector>(i)))
      off += (off.empty() ? "" : ",") + quote(detector_name(static_cast<Detector>(i)));
  std::cout << "{\"problem\":" << quote(p.name) << ",\"status\":" << quote(status_name(r.status))
            << ",\"reason\":" << quote(r.reason) << ",\"message\":" << quote(r.message)
            << ",\"where\":" << quote(r.where) << ",\"speedup\":" << number(r.speedup)
            << ",\"max_abs_err\":" << number(r.max_abs_err) << ",\"max_rel_err\":" << number(r.max_rel_err)
            << ",\"reference_ms\":" << number(r.reference.median_ms)
            << ",\"reference_p10_ms\":" << number(r.reference.p10_ms)
            << ",\"reference_p90_ms\":" << number(r.reference.p90_ms)
            << ",\"candidate_ms\":" << number(r.candidate.median_ms)
            << ",\"candidate_p10_ms\":" << number(r.candidate.p10_ms)
            << ",\"candidate_p90_ms\":" << number(r.candidate.p90_ms)
            << ",\"reference_threads\":" << r.reference.threads << ",\"candidate_threads\":" << r.candidate.threads
            << ",\"samples\":" << r.candidate.samples << ",\"reference_samples\":" << r.reference.samples
            << ",\"trials\":" << r.trials << ",\"shapes\":" << r.shapes
            << ",\"candidate_gbps\":" << number(r.candidate_gbps)
            << ",\"candidate_gflops\":" << number(r.candidate_gflops) << ",\"detectors_off\":[" << off << "]"
            << ",\"sandbox\":" << quote(r.sandbox) << ",\"compile_log\":" << quote(r.compile_log)
            << ",\"runner_log\":" << quote(r.runner_log) << ",\"profile\":" << quote(r.profile)
            << ",\"evaluator_peak_rss_mb\":" << number(r.evaluator_peak_rss_mb) << "}\n";
}

int run_eval(const EvalArgs& a) {
  auto spec = resolve_problem(a.problem, a.roots);
  if (!spec) {
    std::cerr << "kevolve eval: " << spec.error() << "\n";
    return 2;
  }
  std::ifstream in(a.candidate);
  if (!in) {
    std::cerr << "kevolve eval: cannot read candidate file '" << a.candidate << "'\n";
    return 2;
  }
  std::stringstream src;
  src << in.rdbuf();
  Candidate c;
  c.source = src.str();
  c.entry = a.entry.empty() ? spec->entry : a.entry;
  c.provenance = a.candidate;
  const bool kernelbench = spec->reference == "python";  // a KernelBench-format problem: the Python interpreter
  EvalOptions o = a.options;
  for (auto& name : a.detectors_off) {
    Detector d;
    if (!parse_detector(name, d)) {
      std::string all;
      for (auto& n : detector_names()) all += " " + n;
      std::cerr << "kevolve eval: --detector-off: unknown detector '" << name << "' (expected one of:" << all << ")\n";
      return 2;
    }
    o.detectors.set(d, false);
  }
  const std::string backend_name =
      kernelbench ? backend_traits(kernelbench_backend(parse_backend(a.backend).value_or(BackendKind::cpu))).name
                  : a.backend;
  c.language = candidate_language(backend_name);
  auto backend = make_backend(backend_name);
  const EvalResult r = backend->evaluate_source(*spec, c, o);
  if (a.json)
    print_json(*spec, r);
  else
    print_human(*spec, r);
  return r.status == EvalStatus::harness_error ? 3 : 0;
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Verify and time one candidate kernel against a problem's libtorch reference");
  cmd->add_option("--problem,-p", a->problem,
                  "Problem name (searched under the problem folders), folder, problem.toml path, or a "
                  "KernelBench-format .py file")
      ->required();
  cmd->add_option("--candidate,-c", a->candidate,
                  "Source of the candidate: C++ for cpu, CUDA for cuda, HIP for hip (includes kevolve_kernel.h); a "
                  "ModelNew .py for "
                  "a .py problem")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--backend", a->backend,
                  "Hardware interpreter: cpu, cuda (needs kevolve-cuda-eval built on the GPU node) or hip (AMD: "
                  "hipcc here, kevolve-hip-eval and an AMD GPU to evaluate)")
      ->check(CLI::IsMember({"cpu", "cuda", "hip"}));
  cmd->add_option("--arch", a->options.arch, "CUDA: architecture to build for (default sm_90)");
  cmd->add_flag("--json", a->json, "Print one JSON object instead of text");
  cmd->add_option("--entry", a->entry, "Entry point name (default: the spec's, usually kevolve_kernel)");
  cmd->add_option("--problems", a->roots,
                  "Problem folders to search (default: $KEVOLVE_PROBLEMS, ./problems, the installed copy)");
  cmd->add_option("--threads", a->options.threads, "Threads for candidate and reference alike (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--trials", a->options.trials, "Verification trials per shape, each with fresh inputs (>= 5)")
      ->check(CLI::Range(5, 1000));
  cmd->add_option("--seed", a->options.seed, "Base seed of all generated inputs");
  cmd->add_option("--min-time", a->options.min_time_s, "Seconds of timed runs per side, at least")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-reps", a->options.min_reps, "Timed runs per side, at least")->check(CLI::Range(1, 1000000));
  cmd->add_option("--max-reps", a->options.max_reps, "Timed runs per side, at most")->check(CLI::Range(1, 1000000));
  cmd->add_option("--timeout", a->options.call_timeout_s, "Wall-clock seconds one call of the candidate may take")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory-mb", a->options.memory_limit_mb,
                  "Memory limit of the candidate (data segment and address space), MiB above its start-up size")
      ->check(CLI::PositiveNumber);
  std::string names;
  for (auto& n : detector_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--detector-off", a->detectors_off,
                  "Switch one anti-cheat detector off, to test the evaluator itself (" + names +
                      "); the verdict is marked untrustworthy");
  cmd->footer(
      "Exit status: 0 when the candidate was evaluated (whatever its status), 2 on bad usage or a bad spec, 3 when the "
      "evaluator failed.");
  cmd->callback([a, &exit_code] { exit_code = run_eval(*a); });
}

}  // namespace kevolve::cli
