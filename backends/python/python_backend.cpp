#include "backends/python/python_backend.hpp"

#include <cstdio>

#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "backends/process/run_captured.hpp"
#include "backends/device_info.hpp"
#include "backends/python/eval_server.hpp"

namespace kevolve::python {
namespace {

namespace fs = std::filesystem;

// $KEVOLVE_PY_EVAL, else the checkout kevolve was built from, else backends/python/ under the current folder
// (a node bundle run from a copy of the repository elsewhere).
std::string evaluator_script() {
  if (const char* p = std::getenv("KEVOLVE_PY_EVAL"); p && *p) return p;
  const std::string built = std::string(KEVOLVE_SOURCE_DIR) + "/backends/python/kevolve_py_eval.py";
  const std::string here = "backends/python/kevolve_py_eval.py";
  return fs::exists(built) || !fs::exists(here) ? built : fs::absolute(here).string();
}

// The JSON object a script printed last (its own output may come before it); "" if none.
std::string last_json(const std::string& out) {
  const auto brace = out.rfind("\n{");
  return brace == std::string::npos ? (out.rfind("{", 0) == 0 ? out : "") : out.substr(brace + 1);
}

// Parses a script's JSON object and hands it to `read`; "" on success, else what was wrong with it.
template <class F>
std::string read_json_object(const std::string& json, F&& read) {
  try {
    simdjson::ondemand::parser parser;
    simdjson::padded_string text(json);
    auto doc = parser.iterate(text);
    simdjson::ondemand::object obj = doc.get_object();
    read(obj);
    return "";
  } catch (const simdjson::simdjson_error& e) { return e.what(); }
}

// The other scripts of the Python interpreter live beside the evaluator.
std::string beside_evaluator(const std::string& file) {
  return (fs::path(evaluator_script()).parent_path() / file).string();
}

Expected<std::string> read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return Expected<std::string>::failure("cannot read " + what + " " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

EvalStatus status_from(const std::string& s) {
  for (int i = 0; i <= static_cast<int>(EvalStatus::harness_error); ++i)
    if (s == status_name(static_cast<EvalStatus>(i))) return static_cast<EvalStatus>(i);
  return EvalStatus::harness_error;
}

Timing timing_from(simdjson::ondemand::object o) {
  Timing t;
  double v;
  int64_t n;
  if (!o["median_ms"].get(v)) t.median_ms = v;
  if (!o["p10_ms"].get(v)) t.p10_ms = v;
  if (!o["p90_ms"].get(v)) t.p90_ms = v;
  if (!o["samples"].get(n)) t.samples = n;
  if (!o["threads"].get(n)) t.threads = static_cast<int>(n);
  return t;
}

}  // namespace

std::string torch_python() {
  if (const char* p = std::getenv("KEVOLVE_PYTHON"); p && *p) return p;
  // Importing torch takes about a second: probe once per process, not once per candidate.
  static const std::string found = [] {
    for (const char* p : {"/usr/bin/python3", "python3"}) {
      std::string out;
      if (process::run_captured({p, "-c", "import torch"}, 60, out) == 0) return std::string(p);
    }
    return std::string();
  }();
  return found;
}

ProblemSpec kernelbench_problem(const std::string& path) {
  ProblemSpec s;
  s.name = fs::path(path).stem().string();
  s.file = fs::absolute(path).string();
  s.dir = fs::path(s.file).parent_path().string();
  s.description = "KernelBench-format problem " + fs::path(path).filename().string();
  s.reference = "python";
  s.tags = {"kernelbench"};
  return s;
}

namespace {

// Runs one of the trusted Python scripts beside the evaluator with torch's python3 and returns the JSON
// object it printed last; `what` names the script in the failure ("the family matcher", ...).
Expected<std::string> run_script_json(const std::string& script, std::vector<std::string> args,
                                      const std::string& problem_file, const std::string& what) {
  using R = Expected<std::string>;
  const std::string py = torch_python();
  if (py.empty()) return R::failure("no python3 with torch on this machine (set KEVOLVE_PYTHON)");
  const std::vector<std::string> head = {py, beside_evaluator(script)};
  args.insert(args.begin(), head.begin(), head.end());
  std::string out;
  const int rc = process::run_captured(args, 300, out);
  std::string json = last_json(out);
  if (rc != 0 || json.empty())
    return R::failure(problem_file + ": " + what + " gave no result (exit " + std::to_string(rc) +
                      "): " + out.substr(out.size() > 1500 ? out.size() - 1500 : 0));
  return json;
}

}  // namespace

Expected<FamilyMatch> match_family(const std::string& problem_file, const std::string& device) {
  using R = Expected<FamilyMatch>;
  auto ran = run_script_json("kevolve_py_match.py",
                             {"--problem", problem_file, "--device", device == "cuda" ? "cuda" : "cpu"}, problem_file,
                             "the family matcher");
  if (!ran) return R::failure(ran.status());
  const std::string& json = *ran;
  FamilyMatch m;
  std::string error;
  const std::string bad = read_json_object(json, [&](simdjson::ondemand::object& obj) {
    std::string_view sv;
    int64_t n;
    if (!obj["error"].get(sv)) error = std::string(sv);
    if (!obj["family"].get(sv)) m.family = std::string(sv);
    if (!obj["how"].get(sv)) m.how = std::string(sv);
    for (auto [key, list] : {std::pair{"inputs", &m.inputs}, std::pair{"params", &m.params}}) {
      simdjson::ondemand::array a;
      if (obj[key].get(a)) continue;
      for (auto v : a)
        if (!v.get(sv)) list->push_back(std::string(sv));
    }
    if (!obj["output_like"].get(n)) m.output_like = static_cast<int>(n);
    simdjson::ondemand::array dims;
    if (!obj["shape"].get(dims))
      for (auto v : dims)
        if (!v.get(n)) m.shape.push_back(n);
  });
  if (!bad.empty()) return R::failure(problem_file + ": unreadable result from the family matcher: " + bad);
  if (!error.empty()) return R::failure(error);
  return m;
}

namespace {

// A JSON value of a generator's space or parameters as text: numbers (and true/false) as written, strings
// unquoted. `text` tells which it was.
bool value_text(simdjson::ondemand::value v, std::string& out, bool& text) {
  simdjson::ondemand::json_type t;
  if (v.type().get(t)) return false;
  if (t == simdjson::ondemand::json_type::string) {
    std::string_view sv;
    if (v.get(sv)) return false;
    out = std::string(sv);
    text = true;
    return true;
  }
  if (t != simdjson::ondemand::json_type::number && t != simdjson::ondemand::json_type::boolean) return false;
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
    raw.remove_suffix(1);
  out = std::string(raw);
  text = false;
  return true;
}

// {param: value} -> Params; the names of string-valued ones go to `texts` when given.
void read_params(simdjson::ondemand::object o, Params& out) {
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) continue;
    std::string v;
    bool text = false;
    if (value_text(field.value(), v, text)) out[std::string(key)] = v;
  }
}

// {param: [values...]} and {param: value} -> a FamilySpace (parameters in the generator's order).
void read_space(simdjson::ondemand::object& obj, const char* space_key, const char* defaults_key, FamilySpace& s) {
  obj.reset();
  simdjson::ondemand::object space;
  if (!obj[space_key].get(space))
    for (auto field : space) {
      std::string_view key;
      simdjson::ondemand::array values;
      if (field.unescaped_key().get(key) || field.value().get(values)) continue;
      FamilyParam p;
      p.name = std::string(key);
      for (auto v : values) {
        std::string text;
        bool quoted = false;
        simdjson::ondemand::value val;
        if (!v.get(val) && value_text(val, text, quoted)) {
          p.values.push_back(text);
          p.text = p.text || quoted;
        }
      }
      s.params.push_back(std::move(p));
    }
  obj.reset();
  simdjson::ondemand::object defaults;
  if (!obj[defaults_key].get(defaults)) read_params(defaults, s.defaults);
}

std::string json_quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

}  // namespace

Expected<FamilyAnalysis> analyse_families(const std::string& problem_file) {
  using R = Expected<FamilyAnalysis>;
  // The answer depends on the file alone (and on the scripts and torch, which do not change under a running
  // kevolve): kept per file, keyed by its path, size and modification time.
  static std::mutex mu;
  static std::map<std::string, FamilyAnalysis> cache;
  std::error_code ec;
  const std::string path = fs::absolute(problem_file, ec).string();
  const auto size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  const std::string key = path + "\n" + std::to_string(ec ? 0 : size) + "\n" + std::to_string(ec ? 0 : mtime);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto ran =
      run_script_json("kevolve_py_families_cli.py", {"--problem", problem_file}, problem_file, "the family analysis");
  if (!ran) return R::failure(ran.status());
  const std::string& json = *ran;
  FamilyAnalysis a;
  const std::string bad = read_json_object(json, [&](simdjson::ondemand::object& obj) {
    std::string_view sv;
    if (!obj["family"].get(sv)) a.family = std::string(sv);
    if (!obj["reason"].get(sv)) a.reason = std::string(sv);
    if (!obj["graph"].get(sv)) a.graph = std::string(sv);
    if (!obj["layout"].get(sv)) a.layout = std::string(sv);
    read_space(obj, "space", "defaults", a.cuda);
    read_space(obj, "cpu_space", "cpu_defaults", a.cpu);
  });
  if (!bad.empty()) return R::failure(problem_file + ": unreadable result from the family analysis: " + bad);
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = a;
  return a;
}

Expected<GeneratedKernel> generate_family_kernel(const std::string& problem_file, const std::string& backend,
                                                 const Params& params, const FamilySpace& space) {
  using R = Expected<GeneratedKernel>;
  if (backend != "cpu" && backend != "cuda")
    return R::failure("generated kernels are for cpu or cuda, not '" + backend + "'");
  std::string arg = "{";
  for (auto& [name, value] : params) {
    const FamilyParam* p = space.find(name);
    arg += (arg.size() > 1 ? ", " : "") + json_quote(name) + ": " + (p && !p->text ? value : json_quote(value));
  }
  arg += "}";
  auto ran =
      run_script_json("kevolve_py_families_cli.py", {"--problem", problem_file, "--backend", backend, "--params", arg},
                      problem_file, "the kernel generator");
  if (!ran) return R::failure(ran.status());
  const std::string& json = *ran;
  GeneratedKernel k;
  std::string error;
  const std::string bad = read_json_object(json, [&](simdjson::ondemand::object& obj) {
    std::string_view sv;
    if (!obj["error"].get(sv)) error = std::string(sv);
    obj.reset();
    if (!obj["source"].get(sv)) k.source = std::string(sv);
    obj.reset();
    simdjson::ondemand::object used;
    if (!obj["params"].get(used)) read_params(used, k.params);
  });
  if (!bad.empty()) return R::failure(problem_file + ": unreadable result from the kernel generator: " + bad);
  if (!error.empty()) return R::failure(problem_file + ": the kernel generator, at " + arg + ": " + error);
  if (k.source.empty()) return R::failure(problem_file + ": the kernel generator gave no source at " + arg);
  return k;
}

Expected<std::string> renamed_problem_source(const std::string& problem_file) {
  auto text = read_text(problem_file, "the problem file");
  if (!text) return text;
  return std::regex_replace(*text, std::regex(R"(\bModel\b)"), "_KevolveBase");
}

Expected<std::string> kernel_glue_source() {
  return read_text(beside_evaluator("kevolve_kernel_glue.py"), "the kernel glue");
}

BuiltCandidate build(const Candidate& c, const EvalOptions& o) {
  BuiltCandidate b;
  b.entry = "ModelNew";
  if (c.language != "python") {
    b.verdict =
        make_verdict(EvalStatus::harness_error, "language",
                     "the Python backend takes Python candidates; this one is '" + c.language + "'", o.detectors);
    return b;
  }
  b.dir = make_build_dir();
  if (b.dir.empty()) {
    b.verdict =
        make_verdict(EvalStatus::harness_error, "build", "cannot create a private folder under $TMPDIR", o.detectors);
    return b;
  }
  b.build.artifact = b.dir + "/candidate.py";
  std::ofstream(b.build.artifact) << c.source;
  b.build.status = Status::success();
  return b;
}

PythonBackend::PythonBackend(std::string device)
    : device_(std::move(device)), server_(std::make_unique<EvalServer>()) {}
PythonBackend::~PythonBackend() = default;

void PythonBackend::use_gpu(int index) { server_->set_env("CUDA_VISIBLE_DEVICES", cuda_visible_device(index)); }

EvalResult PythonBackend::evaluate(const ProblemSpec& spec, const BuiltCandidate& b, const EvalOptions& o) {
  if (b.verdict) return *b.verdict;
  // `harness_error [busy]` says the machine was too loaded to time the reference, nothing of the candidate:
  // the evaluation is taken again (twice at most), and the verdict says so.
  EvalResult r = run(spec, b.build.artifact, o, false);
  for (int retake = 1; retake <= 2 && r.status == EvalStatus::harness_error && r.reason == "busy"; ++retake) {
    r = run(spec, b.build.artifact, o, false);
    r.profile = "evaluated " + std::to_string(retake + 1) + " times: the machine was too busy to time it\n" + r.profile;
  }
  return r;
}

EvalResult PythonBackend::evaluate_reference(const ProblemSpec& spec, const EvalOptions& o) {
  // The problem file itself with ModelNew = Model: the baseline every candidate should at least match.
  const std::string dir = make_build_dir();
  std::ifstream in(spec.file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string cand = dir + "/reference_as_candidate.py";
  std::ofstream(cand) << text.str() << "\n\nModelNew = Model\n";
  EvalResult r = run(spec, cand, o, true);
  remove_build_dir(dir);
  return r;
}

// Where the reference's torch.compile timings are kept across evaluations: $KEVOLVE_CACHE_DIR, else
// $XDG_CACHE_HOME/kevolve, else ~/.cache/kevolve ("" when none can be named).
static std::string compile_cache_file() {
  std::string dir;
  if (const char* d = std::getenv("KEVOLVE_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::string(x) + "/kevolve";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache/kevolve";
  return dir.empty() ? "" : dir + "/torch-compile-baselines.json";
}

namespace {

// The Python evaluator's command line for one evaluation of `candidate` (the reference's own, `reference`: its
// roofline, no static scan) with the options' detectors.
std::vector<std::string> evaluator_args(const ProblemSpec& spec, const std::string& candidate,
                                        const std::string& device, const EvalOptions& o, bool reference) {
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> argv{"--json",
                                "--problem",
                                spec.file,
                                "--candidate",
                                candidate,
                                "--device",
                                device,
                                "--threads",
                                std::to_string(threads),
                                "--trials",
                                std::to_string(o.trials),
                                "--seed",
                                std::to_string(o.seed),
                                "--min-time",
                                std::to_string(o.min_time_s),
                                "--min-reps",
                                std::to_string(o.min_reps),
                                "--max-reps",
                                std::to_string(o.max_reps),
                                "--timeout",
                                std::to_string(o.call_timeout_s)};
  if (const std::string cache = compile_cache_file(); !cache.empty())
    argv.insert(argv.end(), {"--compile-cache", cache});
  if (reference) argv.insert(argv.end(), {"--detector-off", "static", "--roofline"});
  if (!o.detectors.on(Detector::input_mutation)) argv.insert(argv.end(), {"--detector-off", "input_mutation"});
  if (!o.detectors.on(Detector::fresh_data)) argv.insert(argv.end(), {"--detector-off", "fresh_data"});
  if (!o.detectors.on(Detector::pointer_reuse)) argv.insert(argv.end(), {"--detector-off", "pointer_reuse"});
  if (!o.detectors.on(Detector::timed_outputs)) argv.insert(argv.end(), {"--detector-off", "timed_outputs"});
  if (!o.detectors.on(Detector::isolation)) argv.insert(argv.end(), {"--detector-off", "static"});
  if (!o.detectors.on(Detector::impossible_time))  // the evaluator's clock over each pass, and the bandwidth floor
    argv.insert(argv.end(), {"--detector-off", "timer", "--detector-off", "impossible_time"});
  if (!o.detectors.on(Detector::queued_work)) argv.insert(argv.end(), {"--detector-off", "queued_work"});
  return argv;
}

}  // namespace

EvalResult PythonBackend::run(const ProblemSpec& spec, const std::string& candidate, const EvalOptions& o,
                              bool reference) {
  const std::string py = torch_python();
  if (py.empty())
    return make_verdict(EvalStatus::harness_error, "worker",
                        "no python3 with torch on this machine (set KEVOLVE_PYTHON)", o.detectors);
  const std::vector<std::string> argv = evaluator_args(spec, candidate, device_, o, reference);
  // The Python evaluator bounds its runner itself, with limits that follow the reference's measured time
  // (a slow reference at KernelBench's sizes gets more). This is the last resort, should the trusted
  // evaluator itself stop answering.
  const double limit = 3600 + o.call_timeout_s * (o.trials + 4) + 60 * o.min_time_s;
  auto answer = server_->ask(py, evaluator_script(), argv, limit);
  if (!answer) return make_verdict(EvalStatus::harness_error, "worker", answer.error(), o.detectors);
  const std::string& json = *answer;
  EvalResult r;
  r.detectors = o.detectors;
  const std::string bad = read_json_object(json, [&](simdjson::ondemand::object& obj) {
    std::string_view sv;
    double v;
    int64_t n;
    if (!obj["status"].get(sv)) r.status = status_from(std::string(sv));
    if (!obj["reason"].get(sv)) r.reason = std::string(sv);
    if (!obj["message"].get(sv)) r.message = std::string(sv);
    if (!obj["where"].get(sv)) r.where = std::string(sv);
    if (!obj["max_abs_err"].get(v)) r.max_abs_err = v;
    if (!obj["max_rel_err"].get(v)) r.max_rel_err = v;
    if (!obj["trials"].get(n)) r.trials = static_cast<int>(n);
    if (!obj["shapes"].get(n)) r.shapes = static_cast<int>(n);
    if (!obj["speedup"].get(v)) r.speedup = v;
    if (!obj["compile_speedup"].get(v)) r.compile_speedup = v;
    if (!obj["label"].get(sv)) r.kind = reference ? "reference" : std::string(sv);
    if (!obj["sandbox"].get(sv)) r.sandbox = std::string(sv);
    simdjson::ondemand::object t;
    if (!obj["reference"].get(t)) r.reference = timing_from(t);
    if (!obj["candidate"].get(t)) r.candidate = timing_from(t);
    auto c = obj["compile"];
    if (c.type() == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object co = c.get_object();
      if (!co["unavailable"].get(sv))
        r.profile = "torch.compile: unavailable (" + std::string(sv) + ")\n";
      else {
        std::string_view measured;
        const bool cached = !co["measured"].get(measured) && (co.reset(), !co["cached"].error());
        co.reset();
        r.compiled = timing_from(co);
        r.profile = "torch.compile of the reference: " + std::to_string(r.compiled.median_ms) + " ms" +
                    (cached ? " (measured by an earlier evaluation, " + std::string(measured) + ", and reused)" : "") +
                    "\n";
      }
    }
    if (!obj["runner_log"].get(sv)) r.runner_log = std::string(sv);
    simdjson::ondemand::object checks;
    if (!obj["checks"].get(checks) && !checks["copy_gbps"].get(v))
      r.peak_gbps = 2 * v;  // bytes read + written per second: the rate the problem's bytes move at, at best
    simdjson::ondemand::object roof;
    if (!obj["roofline"].get(roof)) {  // the reference baseline's: bytes, FLOPs and the matmul peak for its dtype
      if (!roof["bytes"].get(v)) r.roofline_bytes = v;
      if (!roof["flops"].get(v)) r.roofline_flops = v;
      if (!roof["peak_gflops"].get(v)) r.peak_gflops = v;
      if (!roof["traffic_gbps"].get(v)) r.peak_gbps = v;
    }
    simdjson::ondemand::object phases;
    if (!obj["phases"].get(phases)) {  // seconds per phase of this evaluation, in the evaluator's order
      std::string line;
      for (auto field : phases) {
        std::string_view key;
        double secs;
        if (field.unescaped_key().get(key) || field.value().get(secs)) continue;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%.*s %.2f s", line.empty() ? "" : ", ", static_cast<int>(key.size()),
                      key.data(), secs);
        line += buf;
      }
      if (!line.empty()) r.profile += "time per phase: " + line + "\n";
    }
  });
  if (!bad.empty())
    return make_verdict(EvalStatus::harness_error, "worker", "unreadable result from the Python evaluator: " + bad,
                        o.detectors);
  r.device = device_ == "cuda" ? "CUDA (python)" : "CPU (python)";
  return r;
}

}  // namespace kevolve::python
