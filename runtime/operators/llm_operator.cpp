#include "runtime/operators/llm_operator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <kainjow/mustache.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/core/expr.hpp"
#include "runtime/operators/apply_diff.hpp"
#include "runtime/operators/diagnosis.hpp"
#include "runtime/operators/reply_code.hpp"

namespace kevolve {

namespace mu = kainjow::mustache;

Expected<PromptTemplates> PromptTemplates::load(const std::string& root) {
  PromptTemplates t;
  for (auto [file, out] : {std::pair{"system.mustache", &t.system},
                           {"child.mustache", &t.child},
                           {"system_cuda.mustache", &t.system_cuda},
                           {"system_python.mustache", &t.system_python}}) {
    std::ifstream in(root + "/prompts/" + file);
    if (!in) return Expected<PromptTemplates>::failure(root + "/prompts/" + file + ": cannot read the prompt template");
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
  }
  return t;
}

Expected<std::string> extract_code(const std::string& reply) {
  using R = Expected<std::string>;
  const ReplyCode r = read_reply(reply);
  if (r.diff_final) return R::failure("the reply is a diff; a full source file is required");
  if (!r.code.empty()) return r.code;
  if (!r.diff.empty()) return R::failure("the reply is a diff; a full source file is required");
  return R::failure(
      "the reply contains no source defining kevolve_kernel (or a CUDA kernel with its // @kevolve launch lines, "
      "or for a KernelBench-format problem a class ModelNew)");
}

std::string cut_note(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const std::string head = text.substr(0, limit);
  size_t cut = head.rfind("\n#");  // the last heading that starts within the limit
  if (cut == std::string::npos || cut < limit / 3) cut = head.rfind("\n\n");
  if (cut == std::string::npos || cut < limit / 3) cut = head.rfind('\n');
  if (cut == std::string::npos || cut < limit / 3) cut = head.find_last_of(" \t");
  if (cut == std::string::npos) cut = limit;
  std::string out = text.substr(0, cut);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out + "\n[... the rest of this note (" + std::to_string(text.size() - cut) + " characters) is left out]";
}

std::string cpu_isa(const std::string& cpuinfo) {
  std::set<std::string> flags;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) flags.insert(w);
      break;
    }
  std::string o;
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                        "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"})
    if (flags.count(f)) o += (o.empty() ? "" : ", ") + std::string(f);
  return o;
}

namespace {

// The first value of a "key : value" line of /proc/cpuinfo ("" if none).
std::string cpuinfo_value(const std::string& cpuinfo, const std::string& key) {
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key, 0) == 0 && line.find(':') != std::string::npos) {
      const size_t v = line.find_first_not_of(" \t", line.find(':') + 1);
      return v == std::string::npos ? std::string() : line.substr(v);
    }
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

FittedNotes fit_notes(const std::vector<NoteText>& notes, size_t budget) {
  FittedNotes out;
  size_t left = budget;
  for (auto& n : notes) {
    if (n.text.size() <= left) {
      out.notes.push_back(n);
      left -= n.text.size();
    } else if (left >= kMinNoteChars) {
      out.notes.push_back({n.title, n.path, cut_note(n.text, left - 100)});  // room for the cut's note
      left = 0;
    } else {
      out.left_out += (out.left_out.empty() ? "" : "; ") + n.title + " (" + n.path + ", " +
                      std::to_string(n.text.size()) + " characters)";
    }
  }
  return out;
}

std::string describe_local_cpu(int eval_threads) {
  const std::string cpuinfo = read_text("/proc/cpuinfo");
  const std::string model = cpuinfo_value(cpuinfo, "model name");
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::string o = (model.empty() ? std::string("an x86 CPU") : model) + ", " + std::to_string(cores) +
                  " logical cores on this machine";
  if (const std::string isa = cpu_isa(cpuinfo); !isa.empty()) o += "; vector ISA: " + isa;
  // The clock: cpufreq's maximum when readable (kHz), else what /proc/cpuinfo says the first core runs at.
  char clock[96] = "";
  const std::string max_khz = read_text("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (const double khz = std::atof(max_khz.c_str()); khz > 0)
    std::snprintf(clock, sizeof clock, "; clock up to %.0f MHz (cpufreq maximum)", khz / 1000);
  else if (const double mhz = std::atof(cpuinfo_value(cpuinfo, "cpu MHz").c_str()); mhz > 0)
    std::snprintf(clock, sizeof clock, "; clock %.0f MHz (as /proc/cpuinfo reads)", mhz);
  o += clock;
  o += "; the evaluation runs each candidate with " +
       (eval_threads > 0 ? std::to_string(eval_threads) + " thread(s)" : "all " + std::to_string(cores) + " cores") +
       " (OpenMP's default team has that size)";
  std::string caches;
  for (auto [name, key] :
       {std::pair{"L1d", _SC_LEVEL1_DCACHE_SIZE}, {"L2", _SC_LEVEL2_CACHE_SIZE}, {"L3", _SC_LEVEL3_CACHE_SIZE}}) {
    const long b = sysconf(key);
    if (b > 0) caches += (caches.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(b / 1024) + " KiB";
  }
  if (!caches.empty()) o += "; caches: " + caches;
  return o;
}

std::string describe_machine(const std::string& backend, const std::string& machine, const EvaluatingDevice& dev,
                             double achieved_gbps, const std::string& achieved_by) {
  char gbps[64] = "";
  if (dev.copy_gbps > 0) std::snprintf(gbps, sizeof gbps, "%.1f GB/s", dev.copy_gbps);
  // A copy slower than a run of the search was measured while other work held the machine: refused.
  std::string refused;
  if (gbps[0] && achieved_gbps > dev.copy_gbps) {
    char fast[64];
    std::snprintf(fast, sizeof fast, "%.1f GB/s", achieved_gbps);
    refused = std::string("copy bandwidth: not stated. The copy measured during the evaluation gave ") + gbps +
              ", but " + (achieved_by.empty() ? "a measured run" : achieved_by) + " moved the problem's bytes at " +
              fast + ": the copy was measured while other work held the machine, so no memory floor is given; " + fast +
              " is what this machine has been seen to sustain";
    gbps[0] = 0;
  }
  const bool gpu = backend == "cuda" || backend == "python-cuda" || backend == "hip";
  if (!gpu) {
    if (!refused.empty()) return machine + (machine.empty() ? "" : "\n") + "Measured " + refused;
    if (!gbps[0]) return machine;
    return machine + (machine.empty() ? "" : "\n") + "Measured copy bandwidth: " + gbps +
           " (bytes read + written, a copy over the timing's working set with the evaluation's threads: the memory "
           "floor your kernel's time is compared with)";
  }
  if (dev.name.empty()) return machine;  // no verdict yet: what the setup knew
  std::string o = dev.name;
  std::string facts;
  if (dev.sms > 0) facts += std::to_string(dev.sms) + " SMs";
  if (dev.l2_bytes > 0)
    facts += (facts.empty() ? "" : ", ") + std::string("L2 ") +
             (dev.l2_bytes >= (int64_t(1) << 20) ? std::to_string(dev.l2_bytes >> 20) + " MiB"
                                                 : std::to_string(dev.l2_bytes >> 10) + " KiB");
  if (gbps[0])
    facts += (facts.empty() ? "" : ", ") + std::string("measured device-to-device copy bandwidth ") + gbps +
             " (bytes read + written: the memory floor your kernel's time is compared with)";
  if (!refused.empty()) facts += (facts.empty() ? "" : "; ") + refused;
  if (!facts.empty()) o += ": " + facts;
  return o;
}

std::string machine_constraints(const std::string& text, bool machine_known, const EvaluatingDevice& dev) {
  if (!machine_known) return text;
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    std::string key = eq == std::string::npos || line.rfind("#", 0) == 0 ? "" : line.substr(0, eq);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const bool hint = key.size() > 5 && key.compare(key.size() - 5, 5, "_hint") == 0;
    const bool stated = (key == "sm_count" && dev.sms > 0) || (key == "l2_bytes" && dev.l2_bytes > 0);
    if (hint || stated) continue;
    out += line + "\n";
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

LlmOperator::LlmOperator(LlmOperatorSetup s)
    : client_(std::move(s.client)),
      t_(std::move(s.prompts)),
      spec_(std::move(s.spec)),
      reference_(std::move(s.reference_formula)),
      hardware_(std::move(s.hardware)),
      constraints_(std::move(s.hardware_constraints)),
      kb_(std::move(s.kb)),
      concurrency_(std::max(1, s.concurrency)),
      backend_(std::move(s.backend)),
      eval_threads_(s.eval_threads),
      machine_(std::move(s.machine)) {
  if (machine_.empty() && (backend_ == "cpu" || backend_ == "python")) machine_ = describe_local_cpu(eval_threads_);
}

std::string LlmOperator::fatal() const {
  if (auto p = client_->permanent_error(); !p.empty()) return p;
  std::lock_guard<std::mutex> lock(mu_);
  return breaker_;
}

std::string LlmOperator::exhausted() const {
  if (auto f = fatal(); !f.empty()) return f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!no_new_ideas_.empty()) return no_new_ideas_;
  }
  return client_->budget_exhausted();
}

std::string LlmOperator::entry_words() const {
  if (kernelbench()) return "a complete Python file defining class ModelNew in one ```python block";
  if (backend_ == "cuda")
    return "the complete CUDA source with its `// @kevolve kernel` launch lines (or extern \"C\" int "
           "kevolve_kernel(const kv_args* a)) in one ```cuda block";
  return "the complete C++ source defining extern \"C\" int kevolve_kernel(const kv_args* a) in one ```cpp block";
}

namespace {

std::string shape_text(const std::vector<std::string>& s) {
  std::string o;
  for (auto& d : s) o += (o.empty() ? "" : ", ") + d;
  return o;
}

std::string binding_text(const ShapeBinding& b) {
  std::string o;
  for (auto& [k, v] : b) o += (o.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return o;
}

mu::data tensor_list(const std::vector<TensorSpec>& ts) {
  mu::data list{mu::data::type::list};
  for (auto& t : ts) {
    mu::data e;
    e.set("name", t.name);
    e.set("dtype", dtype_name(t.dtype));
    e.set("shape", shape_text(t.shape));
    list.push_back(e);
  }
  return list;
}

mu::data items(const std::vector<std::string>& v) {
  mu::data list{mu::data::type::list};
  for (auto& s : v) list.push_back(mu::data(s));
  return list;
}

}  // namespace

KbQuery LlmOperator::knowledge_query(const Proposal& p, const SearchGraph& g, const OperatorContext& ctx) const {
  if (!kb_) return {};
  std::string query = spec_.name + " " + shape_text(spec_.tags);
  const NodeRecord* parent = p.parents.empty() ? nullptr : g.find(p.parents[0]);
  if (parent && !ctx.parents.empty()) {  // what went wrong or what bounds it, in the diagnosis's words
    const Diagnosis d = diagnose(*parent, spec_, ctx.parents[0].report, backend_, ctx.parents[0].peak_gbps,
                                 fastest_achieved_gbps(g.nodes(), spec_, backend_));
    query += " " + d.summary + (d.directives.empty() ? "" : " " + d.directives.front());
  }
  return {query, hardware_, spec_.name, kKnowledgeHits};
}

namespace {

// The problem as the prompt states it: tensors, parameters, shapes, tolerances, roofline figures.
void describe_problem(mu::data& d, const ProblemSpec& spec, const std::string& backend, bool kernelbench) {
  d.set("problem", spec.name);
  d.set("description", spec.description);
  d.set("inputs", tensor_list(spec.inputs));
  d.set("outputs", tensor_list(spec.outputs));
  std::string params;
  for (auto& x : spec.params) params += (params.empty() ? "" : ", ") + x.name + " = " + std::to_string(x.value);
  d.set("has_params", spec.params.empty() ? mu::data::type::bool_false : mu::data::type::bool_true);
  d.set("params", params);
  const ShapeBinding& bench = spec.bench_for(backend);
  d.set("bench", binding_text(bench));
  if (kernelbench) {
    std::ifstream in(spec.file);
    std::stringstream text;
    text << in.rdbuf();
    d.set("kernelbench", mu::data::type::bool_true);
    d.set("problem_source", text.str());
  }
  std::string verify;
  for (auto& b : spec.verify) verify += (verify.empty() ? "" : "; ") + binding_text(b);
  d.set("verify", verify);
  std::string tol;
  for (auto& [dt, t] : spec.tolerances)
    tol += (tol.empty() ? "" : "; ") + std::string(dtype_name(dt)) + " atol " + std::to_string(t.atol) + " rtol " +
           std::to_string(t.rtol);
  d.set("tolerance", tol);
  std::string err;
  d.set("bytes", std::to_string(static_cast<int64_t>(eval_expr(spec.roofline_bytes, bench, err).value_or(0))));
  d.set("flops", std::to_string(static_cast<int64_t>(eval_expr(spec.roofline_flops, bench, err).value_or(0))));
}

// What this proposal asks for, by its operation.
std::string task_text(Operation op, bool kernelbench) {
  if (op == Operation::seed && kernelbench)
    return "Write a first, simple and correct ModelNew whose computation runs in your own kernel.";
  if (op == Operation::seed) return "Write a first, simple and correct kernel for this problem.";
  if (op == Operation::repair) return "The kernel below failed. Fix it so that it is correct; keep it simple.";
  if (op == Operation::crossover)
    return "Combine the best ideas of the two kernels below into one kernel that is faster than both.";
  return "Make the kernel below faster while keeping it correct.";
}

std::string time_and_change(const NodeRecord& n, const SearchGraph& g);

// The parent (source, verdict, diagnosis with its directives) and, for a crossover, the second parent.
// Returns the diagnosis's summary ("" without a parent), which also steers knowledge retrieval.
std::string describe_parents(mu::data& d, const Proposal& p, const SearchGraph& g, const OperatorContext& ctx,
                             const ProblemSpec& spec, const std::string& backend, double achieved) {
  const NodeRecord* parent = p.parents.empty() ? nullptr : g.find(p.parents[0]);
  std::string summary;
  std::vector<std::string> directives;
  if (parent && !ctx.parents.empty()) {
    const NodeContext& pc = ctx.parents[0];
    d.set("parent", mu::data::type::bool_true);
    d.set("parent_id", std::to_string(parent->id));
    d.set("parent_status", std::string(status_name(parent->status)) +
                               (parent->correct() ? ", " + std::to_string(parent->fitness) + "x over PyTorch" +
                                                        time_and_change(*parent, g)
                                                  : ""));
    d.set("parent_source", pc.source);
    std::string report = pc.report.substr(0, 4000);
    if (parent->correct()) {  // a "where:" line locates a failure; on a correct kernel it only confuses
      std::string kept;
      std::istringstream lines(report);
      for (std::string l; std::getline(lines, l);)
        if (l.rfind("where:", 0) != 0) kept += (kept.empty() ? "" : "\n") + l;
      report = kept;
    }
    if (!report.empty()) d.set("parent_report", report);
    Diagnosis diag = diagnose(*parent, spec, pc.report, backend, pc.peak_gbps, achieved);
    directives.push_back(diag.summary);
    directives.insert(directives.end(), diag.directives.begin(), diag.directives.end());
    summary = diag.summary;
  }
  if (p.op == Operation::crossover && ctx.parents.size() > 1 && p.parents.size() > 1) {
    const NodeRecord* second = g.find(p.parents[1]);
    d.set("second_parent", mu::data::type::bool_true);
    d.set("second_id", std::to_string(p.parents[1]));
    d.set("second_status", second ? status_name(second->status) : "?");
    d.set("second_source", ctx.parents[1].source);
  }
  if (!directives.empty()) {
    mu::data dir;
    dir.set("items", items(directives));
    d.set("directives", dir);
  }
  return summary;
}

// The best kernels so far ([llm] best_k, best first) with their code, leaving out the parent itself (shown in
// full above). Each source is cut at 6000 characters.
void describe_best(mu::data& d, const Proposal& p, const SearchGraph& g, const OperatorContext& ctx) {
  mu::data list{mu::data::type::list};
  int shown = 0;
  for (const NodeContext& best : ctx.best) {
    if (!best.id || (!p.parents.empty() && best.id == p.parents[0])) continue;
    const NodeRecord* b = g.find(best.id);
    if (!b) continue;
    mu::data e;
    e.set("id", std::to_string(b->id));
    char speed[32];
    std::snprintf(speed, sizeof speed, "%.3f", b->fitness);
    e.set("speedup", std::string(speed));
    if (!best.source.empty())
      e.set("source", best.source.size() > 6000 ? best.source.substr(0, 6000) + "\n[... cut]" : best.source);
    list.push_back(e);
    ++shown;
  }
  if (shown == 0) return;
  mu::data ex;
  ex.set("items", list);
  d.set("exemplars", ex);
}

// Whether `doc` is the problem's own note: written for it alone (`problems` is just this problem) or naming
// it in its title, and for any hardware or this target.
bool own_note(const KbDocument& doc, const std::string& problem, const std::string& hardware) {
  const auto& hw = doc.hardware;
  if (std::find(hw.begin(), hw.end(), "any") == hw.end() && std::find(hw.begin(), hw.end(), hardware) == hw.end())
    return false;
  return (doc.problems.size() == 1 && doc.problems[0] == problem) || doc.title.find(problem) != std::string::npos;
}

// Knowledge-base notes: the problem's own note first (own_note), then those the deep-search agent
// retrieved (ctx.knowledge), else retrieved here, in relevance order; fitted to kKnowledgeBudgetChars
// (fit_notes), and what was left out is said.
void describe_knowledge(mu::data& d, const KnowledgeBase& kb, const KbQuery& query, const OperatorContext& ctx,
                        const std::string& problem) {
  auto hits = ctx.knowledge_given ? ctx.knowledge : kb.search(query);
  std::vector<const KbDocument*> docs;
  for (auto& doc : kb.documents())
    if (own_note(doc, problem, query.hardware)) docs.push_back(&doc);
  for (auto& h : hits)
    for (auto& doc : kb.documents())
      if (doc.path == h.path && std::find(docs.begin(), docs.end(), &doc) == docs.end()) docs.push_back(&doc);
  if (docs.empty()) return;
  std::vector<NoteText> notes;
  for (auto* doc : docs) notes.push_back({doc->title, doc->path, doc->body});
  const FittedNotes fitted = fit_notes(notes, kKnowledgeBudgetChars);
  mu::data list{mu::data::type::list};
  for (auto& n : fitted.notes) {
    mu::data e;
    e.set("title", n.title);
    e.set("path", n.path);
    e.set("text", n.text);
    list.push_back(e);
  }
  mu::data kn;
  kn.set("items", list);
  kn.set("budget", std::to_string(kKnowledgeBudgetChars));
  if (!fitted.left_out.empty()) kn.set("left_out", fitted.left_out);
  d.set("knowledge", kn);
}

// The code of the function a registry entry of references.cpp hands to simple() ("simple(map_id, in, p)"),
// a blank line after it; "" when the entry computes inline.
std::string reference_function(const std::string& src, const std::string& entry) {
  const size_t call = entry.find("simple(");
  if (call == std::string::npos) return {};
  const size_t name_at = call + 7, comma = entry.find(',', name_at);
  if (comma == std::string::npos) return {};
  const std::string name = entry.substr(name_at, comma - name_at);
  if (name.empty() || name.find_first_of("[]() \n") != std::string::npos) return {};
  const size_t def = src.find("\nTensors " + name + "(");
  if (def == std::string::npos) return {};
  const size_t end = src.find("\n}\n", def);
  if (end == std::string::npos || end - def > 6000) return {};
  return src.substr(def + 1, end + 2 - def - 1) + "\n";
}

// The reference's semantics as the spec states them: the comment block heading problem.toml (the formula)
// and the libtorch reference's own code (backends/reference/references.cpp), when they can be read.
std::string reference_semantics(const ProblemSpec& spec) {
  std::string out;
  std::ifstream toml(spec.file);
  for (std::string line; std::getline(toml, line);) {
    if (line.rfind("#", 0) != 0) break;
    const size_t text = line.find_first_not_of("# ");
    out += (text == std::string::npos ? std::string() : line.substr(std::min<size_t>(text, 2))) + "\n";
  }
  std::ifstream refs(std::string(KEVOLVE_SOURCE_DIR) + "/backends/reference/references.cpp");
  std::stringstream ss;
  ss << refs.rdbuf();
  const std::string src = ss.str();
  const size_t at = spec.reference.empty() ? std::string::npos : src.find("{\"" + spec.reference + "\",");
  if (at != std::string::npos) {
    const size_t line = src.rfind('\n', at);
    size_t end = src.find("\n  r.push_back", at);
    if (end == std::string::npos) end = src.find("\n  return r;", at);
    if (end != std::string::npos && end - line < 6000) {
      const std::string entry = src.substr(line + 1, end - line - 1);
      out += (out.empty() ? "" : "\n") +
             std::string("The libtorch reference (its i[k] is the k-th input listed below, the kernel's inputs[k]):") +
             "\n```cpp\n" + reference_function(src, entry) + entry + "\n```\n";
    }
  }
  return out;
}

// "0.0312 ms" / "4.91 ms": a time as the prompt states it (4 significant digits).
std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g ms", ms);
  return b;
}

// A correct node's median time (its reference's beside it) and its change against its parent when the
// parent is correct and timed: ", 26 ms (reference 9.4 ms, median times), 2.6x slower than its parent node 4
// (10 ms)"; "" when the node has no time.
std::string time_and_change(const NodeRecord& n, const SearchGraph& g) {
  if (n.candidate_ms <= 0) return {};
  std::string o = ", " + ms_text(n.candidate_ms) +
                  (n.reference_ms > 0 ? " (reference " + ms_text(n.reference_ms) + ", median times)" : " (median)");
  const NodeRecord* up = n.parents.empty() ? nullptr : g.find(n.parents[0]);
  if (!up || !up->correct() || up->candidate_ms <= 0) return o;
  const double r = n.candidate_ms / up->candidate_ms;
  const auto id = static_cast<unsigned long long>(up->id);
  char change[128];
  if (r >= 1.02)
    std::snprintf(change, sizeof change, ", %.2gx slower than its parent node %llu", r, id);
  else if (r <= 1 / 1.02)
    std::snprintf(change, sizeof change, ", %.2gx faster than its parent node %llu", 1 / r, id);
  else
    std::snprintf(change, sizeof change, ", as fast as its parent node %llu (within 2%%)", id);
  return o + change + " (" + ms_text(up->candidate_ms) + ")";
}

// The last attempts of the search, newest first: operation, parent, outcome with the node's median time
// and its change against its parent, and what the reply said it did.
void describe_history(mu::data& d, const Proposal& p, const SearchGraph& g,
                      const std::map<std::string, std::string>& summaries) {
  std::vector<const NodeRecord*> scored;
  for (auto& [id, n] : g.nodes())
    if (n.scored()) scored.push_back(&n);
  std::sort(scored.begin(), scored.end(), [](auto* a, auto* b) { return a->id > b->id; });
  mu::data list{mu::data::type::list};
  int shown = 0;
  for (auto* n : scored) {
    if (shown == 6) break;
    if (!p.parents.empty() && n->id == p.parents[0]) continue;  // the parent is described in full below
    std::string line = "node " + std::to_string(n->id) + " (" + operation_name(n->op) +
                       (n->parents.empty() ? "" : " of node " + std::to_string(n->parents[0])) + "): ";
    if (n->correct()) {
      char speed[32];
      std::snprintf(speed, sizeof speed, "%.3fx", n->fitness);
      line += std::string("correct, ") + speed;
      line += time_and_change(*n, g);
    } else {
      line += status_name(n->status);
      const std::string why = n->message.empty() ? n->reason : n->message;
      if (!why.empty()) line += ": " + why.substr(0, 160);
    }
    if (auto it = n->params.find("source"); it != n->params.end())
      if (auto s = summaries.find(it->second); s != summaries.end()) line += " — it said: " + s->second;
    list.push_back(mu::data(line));
    ++shown;
  }
  if (shown == 0) return;
  mu::data h;
  h.set("items", list);
  d.set("history", h);
}

// What the reply says it changed: its prose after the last code block (or before it), one or two sentences.
std::string change_summary(const std::string& reply) {
  const std::string text = strip_thinking(reply);
  const size_t close = text.rfind("```");
  std::string tail = close == std::string::npos ? "" : text.substr(close + 3);
  if (tail.find_first_not_of(" \t\r\n") == std::string::npos) tail = text.substr(0, text.find("```"));
  for (auto& c : tail)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  const size_t b = tail.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  tail = tail.substr(b);
  if (tail.size() > 240) tail = tail.substr(0, tail.find_last_of(' ', 240)) + " ...";
  while (!tail.empty() && tail.back() == ' ') tail.pop_back();
  return tail;
}

const char* kCpuExample =
    "// y = a * x + b, elementwise over any shape (contiguous float32), one OpenMP loop.\n"
    "#include \"kevolve_kernel.h\"\n"
    "#include <cstdint>\n\n"
    "extern \"C\" int kevolve_kernel(const kv_args* a) {\n"
    "  const float* x = static_cast<const float*>(a->inputs[0].data);\n"
    "  float* y = static_cast<float*>(a->outputs[0].data);\n"
    "  int64_t n = 1;\n"
    "  for (int d = 0; d < a->inputs[0].ndim; ++d) n *= a->inputs[0].shape[d];\n"
    "  const float s = static_cast<float>(a->params[0]), b = static_cast<float>(a->params[1]);\n"
    "#pragma omp parallel for simd schedule(static)\n"
    "  for (int64_t i = 0; i < n; ++i) y[i] = s * x[i] + b;\n"
    "  return 0;\n"
    "}\n";

const char* kCudaExample =
    "// y = a * x + b, elementwise, one thread per element.\n"
    "// @kevolve kernel axpb\n"
    "// @kevolve grid cdiv(N, 256)\n"
    "// @kevolve block 256\n"
    "#include \"kevolve_kernel.h\"\n\n"
    "extern \"C\" __global__ void axpb(const kv_cuda_args a) {\n"
    "  const long long n = kv_numel(&a.inputs[0]);\n"
    "  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  const float* x = (const float*)a.inputs[0].data;\n"
    "  float* y = (float*)a.outputs[0].data;\n"
    "  y[i] = (float)a.params[0] * x[i] + (float)a.params[1];\n"
    "}\n";

std::string render(const std::string& tmpl, const mu::data& d) {
  mu::mustache m(tmpl);
  m.set_custom_escape([](const std::string& s) { return s; });  // prompts are text, not HTML
  return m.render(d);
}

}  // namespace

std::string LlmOperator::system_prompt() const {
  const std::string& tmpl = kernelbench() && !t_.system_python.empty()      ? t_.system_python
                            : backend_ == "cuda" && !t_.system_cuda.empty() ? t_.system_cuda
                                                                            : t_.system;
  mu::data sd;
  sd.set("hardware", hardware_);
  if (kernelbench()) {
    const std::string lang = !kernel_language_.empty()                        ? kernel_language_
                             : is_backend(backend_, BackendKind::python_cuda) ? "cuda"
                                                                              : "cpp";
    sd.set(lang, mu::data::type::bool_true);
    sd.set(is_backend(backend_, BackendKind::python_cuda) ? "gpu" : "cpu", mu::data::type::bool_true);
  }
  return render(tmpl, sd);
}

std::pair<std::string, std::string> LlmOperator::prompts(const Proposal& p, const SearchGraph& g,
                                                         const OperatorContext& ctx) const {
  mu::data d;
  d.set("hardware", hardware_);
  d.set("reference", reference_);
  d.set("lang", fence());
  describe_problem(d, spec_, backend_, kernelbench());
  d.set("task", task_text(p.op, kernelbench()));
  if (!kernelbench())
    if (auto sem = reference_semantics(spec_); !sem.empty()) d.set("reference_semantics", sem);
  std::string achieved_by;  // whose run moved the problem's bytes fastest: a floor below it would be false
  const double achieved = fastest_achieved_gbps(g.nodes(), spec_, backend_, &achieved_by);
  const std::string machine = describe_machine(backend_, machine_, ctx.device, achieved, achieved_by);
  if (!machine.empty()) d.set("machine", machine);
  // The target family's hints give way to the evaluating machine's own facts.
  if (auto c = machine_constraints(constraints_, !machine.empty(), ctx.device); !c.empty())
    d.set("hardware_constraints", c);
  if (p.op == Operation::seed && !kernelbench()) {
    mu::data ex;
    ex.set("code", std::string(backend_ == "cuda" ? kCudaExample : kCpuExample));
    d.set("example", ex);
  }
  const std::string diagnosis = describe_parents(d, p, g, ctx, spec_, backend_, achieved);
  describe_best(d, p, g, ctx);
  {
    std::map<std::string, std::string> summaries;
    {
      std::lock_guard<std::mutex> lock(mu_);
      summaries = summaries_;
    }
    describe_history(d, p, g, summaries);
  }
  if (kb_) {
    const std::string query = spec_.name + " " + shape_text(spec_.tags) + (diagnosis.empty() ? "" : " " + diagnosis);
    describe_knowledge(d, *kb_, {query, hardware_, spec_.name, kKnowledgeHits}, ctx, spec_.name);
  }
  return {system_prompt(), render(t_.child, d)};
}

std::string LlmOperator::pick_model(Rng& rng) const {
  const auto& e = client_->config().ensemble;
  if (e.empty()) return client_->config().model;
  double total = 0;
  for (auto& [m, w] : e) total += w;
  double x = std::uniform_real_distribution<double>(0, total)(rng);
  for (auto& [m, w] : e)
    if ((x -= w) <= 0) return m;
  return e.back().first;
}

int LlmOperator::max_tokens_for(const std::string& model) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = raised_max_tokens_.find(model);
  return std::max(client_->max_tokens_for(model), it == raised_max_tokens_.end() ? 0 : it->second);
}

Expected<Offspring> LlmOperator::give_up(const std::string& why, bool duplicate) {
  const int n = ++failed_in_a_row_;
  const int dup = duplicate ? ++duplicates_in_a_row_ : (duplicates_in_a_row_ = 0);
  const int limit = client_->config().breaker;
  // Proposals without a usable reply are spaced like retries: the next request of the operator waits
  // backoff_s, doubling with each one in a row (within max_backoff_s), instead of going out at once.
  if (!duplicate && (limit <= 0 || n < limit)) {
    const auto& c = client_->config();
    client_->pause(std::min(c.max_backoff_s, c.backoff_s * std::pow(2.0, n - 1)),
                   std::to_string(n) + " proposal(s) in a row without a usable reply");
  }
  if (limit > 0 && n >= limit) {
    std::lock_guard<std::mutex> lock(mu_);
    if (dup >= n) {  // every proposal of the run answered with kernels the search has: no new idea, no fault
      if (no_new_ideas_.empty())
        no_new_ideas_ =
            "the model proposed only kernels this search has already evaluated, " + std::to_string(n) +
            " proposals in a row (twice each): it has run out of new ideas ([llm] breaker = " + std::to_string(limit) +
            ")";
    } else if (breaker_.empty()) {
      breaker_ = "the LLM operator stopped after " + std::to_string(n) +
                 " proposals in a row got no usable reply (circuit breaker, [llm] breaker = " + std::to_string(limit) +
                 "); last: " + why;
    }
  }
  return Expected<Offspring>::failure("LLM: " + why);
}

namespace {

// The kernel a reply holds: its code, or the parent's source patched by the reply's diff (from_diff).
struct ReplyKernel {
  std::string code;
  bool from_diff = false;
};

// The reply's kernel, or (failure) the note a retry is asked with, saying why the reply cannot be used;
// `missing` names what a reply without code lacks (class ModelNew, a CUDA kernel, ...).
Expected<ReplyKernel> reply_kernel(const llm::Completion& reply, const std::string* parent_source,
                                   const std::string& missing) {
  using R = Expected<ReplyKernel>;
  const ReplyCode rc = read_reply(reply.text);
  if (!rc.diff_final && !rc.code.empty()) return ReplyKernel{rc.code, false};
  // A diff against the parent is applied to the parent's source; one that does not apply is asked again.
  if (rc.diff.empty()) {
    const bool blank = strip_thinking(reply.text).find_first_not_of(" \t\r\n") == std::string::npos;
    if (blank && !reply.refusal.empty()) return R::failure("the model refused: " + reply.refusal.substr(0, 300));
    if (blank && (reply.reasoning || reply.text.find_first_not_of(" \t\r\n") != std::string::npos))
      return R::failure("it had no text besides its reasoning");
    return R::failure(blank ? "it was empty (no text at all)" : "it contains no " + missing);
  }
  if (!parent_source)
    return R::failure(
        "the reply is a diff, but there is no parent kernel to apply it to; a full source file is required");
  auto applied = apply_unified_diff(*parent_source, rc.diff, "the parent");
  if (!applied) return R::failure("your diff could not be applied: " + applied.error());
  if (!defines_entry(*applied))
    return R::failure("your diff, applied to the parent, leaves no source defining the kernel");
  return ReplyKernel{std::move(*applied), true};
}

}  // namespace

std::string LlmOperator::missing_words() const {
  return kernelbench()        ? "class ModelNew"
         : backend_ == "cuda" ? "CUDA kernel with its // @kevolve launch lines"
                              : "source defining kevolve_kernel";
}

// One proposal: the prompt, at most two replies (the second asked with a note saying why the first could not
// be used, and with a larger token limit when the first was cut), the child from the usable one.
Expected<Offspring> LlmOperator::make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) {
  if (auto why = exhausted(); !why.empty()) return Expected<Offspring>::failure("LLM: " + why);
  auto [system, user] = prompts(p, g, ctx);
  const std::string model = pick_model(rng);
  const std::string* parent_source =
      ctx.parents.empty() || ctx.parents[0].source.empty() ? nullptr : &ctx.parents[0].source;
  int max_tokens = max_tokens_for(model);
  std::string note, transcript;
  int duplicates = 0;      // replies whose kernel the search already has
  llm::Completion judged;  // the latest reply; what became of it goes to the journal
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt > 0) client_->journal_outcome(judged, "not used: " + note);
    const std::string asked =
        note.empty()
            ? user
            : user + "\n\n# Note\nYour previous reply could not be used: " + note + ". Answer with " + entry_words() +
                  (parent_source ? " (or a unified diff against the parent in one ```diff block)" : "") + ".";
    auto reply = client_->complete(system, asked, llm::RequestOptions{model, max_tokens});
    if (!reply) {
      if (!client_->permanent_error().empty() || !client_->budget_exhausted().empty())
        return Expected<Offspring>::failure("LLM: " + reply.error());  // exhausted() stops the search
      return give_up(reply.error());
    }
    judged = *reply;
    if (!transcript.empty()) transcript += "\n\n----- retry (the reply above could not be used: " + note + ") -----\n";
    transcript += "[reply" + (reply->request_id.empty() ? std::string() : " " + reply->request_id) + ", " +
                  (reply->finish_reason.empty() ? "no finish reason" : "finish " + reply->finish_reason) + ", " +
                  std::to_string(reply->input_tokens) + " input + " + std::to_string(reply->output_tokens) +
                  " output tokens]\n" + reply->text;
    // Replies that cannot hold a whole answer: cut at the limit, a tool call, nothing but reasoning.
    if (reply->truncated) {
      ++unusable_;
      note = "it was cut at the output limit of " + std::to_string(max_tokens) +
             " tokens before it ended, so none of its code was used; write less prose";
      max_tokens = std::min(client_->max_tokens_limit(), max_tokens * 2);
      {
        std::lock_guard<std::mutex> lock(mu_);
        int& raised = raised_max_tokens_[model];
        raised = std::max(raised, max_tokens);
      }
      continue;
    }
    if (reply->tool_call && strip_thinking(reply->text).find("```") == std::string::npos) {
      ++unusable_;
      note = "it called a tool, and no tools are available here: answer in plain text";
      continue;
    }
    auto kernel = reply_kernel(*reply, parent_source, missing_words());
    if (!kernel) {
      ++unusable_;
      note = kernel.error();
      continue;
    }
    std::string code = std::move(kernel->code);
    const std::string patched =  // ", a diff on node N" when the code is the parent patched by the reply
        kernel->from_diff ? ", a diff on node " + std::to_string(p.parents.empty() ? ctx.parents[0].id : p.parents[0])
                          : std::string();
    const std::string hash = std::to_string(std::hash<std::string>{}(code));
    if (g.has_params(
            {{"source", hash}})) {  // the search has this very kernel already: evaluating it again says nothing
      ++unusable_;
      ++duplicates;
      note = "its kernel is identical to one this search has already evaluated; propose a different change";
      continue;
    }
    failed_in_a_row_ = 0;
    duplicates_in_a_row_ = 0;
    Offspring o;
    o.candidate.source = code;
    o.candidate.language = kernelbench() ? "python" : backend_ == "cuda" ? "cuda" : "cpp";
    o.candidate.provenance = "llm " + model + " (" + operation_name(p.op) + patched + ")";
    o.params["source"] = hash;  // identical kernels are duplicates
    o.prompt = "[model] " + model + "\n[system]\n" + system + "\n[user]\n" + asked;
    o.reply = transcript;  // the replies as received (a diff stays a diff; the source is the patched parent)
    client_->journal_outcome(*reply, "used: " + o.candidate.provenance);
    if (auto summary = change_summary(reply->text); !summary.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      summaries_[o.params["source"]] = summary;
    }
    return o;
  }
  client_->journal_outcome(judged, "not used: " + note);
  return give_up("replies could not be used after 2 attempts: " + note, duplicates == 2);
}

}  // namespace kevolve
