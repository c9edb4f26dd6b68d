#include "runtime/operators/llm_operator.hpp"

#include <fstream>
#include <functional>
#include <kainjow/mustache.hpp>
#include <sstream>

#include "runtime/core/expr.hpp"
#include "runtime/operators/apply_diff.hpp"
#include "runtime/operators/diagnosis.hpp"

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

namespace {

// Whether a source defines a candidate: the host entry point, a kernel-only CUDA launch line, or a ModelNew.
bool defines_kernel(const std::string& s) {
  return s.find("kevolve_kernel") != std::string::npos || s.find("@kevolve kernel") != std::string::npos ||
         s.find("class ModelNew") != std::string::npos;
}

// Whether a fenced block (its info string and body), or a bare reply, is a diff rather than a source file.
bool is_diff(const std::string& lang, const std::string& body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  const std::string head = first == std::string::npos ? "" : body.substr(first, 16);
  return lang.find("diff") != std::string::npos || lang.find("patch") != std::string::npos ||
         head.rfind("--- ", 0) == 0 || head.rfind("diff --git", 0) == 0 || head.rfind("@@", 0) == 0;
}

// The reply's fenced blocks: the last one with source defining the kernel, and the last diff.
struct ReplyBlocks {
  std::string code, diff;
  bool fenced = false;
};

ReplyBlocks scan_reply(const std::string& reply) {
  ReplyBlocks r;
  for (size_t pos = 0;;) {
    const size_t open = reply.find("```", pos);
    if (open == std::string::npos) break;
    r.fenced = true;
    const size_t eol = reply.find('\n', open);
    if (eol == std::string::npos) break;
    const std::string lang = reply.substr(open + 3, eol - open - 3);
    const size_t close = reply.find("```", eol + 1);
    if (close == std::string::npos) break;
    const std::string body = reply.substr(eol + 1, close - eol - 1);
    if (is_diff(lang, body))
      r.diff = body;
    else if (defines_kernel(body))
      r.code = body;
    pos = close + 3;
  }
  if (!r.fenced && is_diff("", reply)) r.diff = reply;
  return r;
}

}  // namespace

Expected<std::string> extract_code(const std::string& reply) {
  using R = Expected<std::string>;
  const ReplyBlocks b = scan_reply(reply);
  if (!b.code.empty()) return b.code;
  if (!b.diff.empty()) return R::failure("the reply is a diff; a full source file is required");
  if (!b.fenced &&
      (reply.find("kevolve_kernel(") != std::string::npos || reply.find("@kevolve kernel") != std::string::npos ||
       reply.find("class ModelNew") != std::string::npos))
    return reply;
  return R::failure(
      "the reply contains no source defining kevolve_kernel (or a CUDA kernel with its // @kevolve launch lines, "
      "or for a KernelBench-format problem a class ModelNew)");
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
      backend_(std::move(s.backend)) {}

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
    const Diagnosis d = diagnose(*parent, spec_, ctx.parents[0].report, backend_);
    query += " " + d.summary + (d.directives.empty() ? "" : " " + d.directives.front());
  }
  return {query, hardware_, spec_.name, 2};
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

// The parent (source, verdict, diagnosis with its directives) and, for a crossover, the second parent.
// Returns the diagnosis's summary ("" without a parent), which also steers knowledge retrieval.
std::string describe_parents(mu::data& d, const Proposal& p, const SearchGraph& g, const OperatorContext& ctx,
                             const ProblemSpec& spec, const std::string& backend) {
  const NodeRecord* parent = p.parents.empty() ? nullptr : g.find(p.parents[0]);
  std::string summary;
  std::vector<std::string> directives;
  if (parent && !ctx.parents.empty()) {
    const NodeContext& pc = ctx.parents[0];
    d.set("parent", mu::data::type::bool_true);
    d.set("parent_id", std::to_string(parent->id));
    d.set("parent_status", std::string(status_name(parent->status)) +
                               (parent->correct() ? ", " + std::to_string(parent->fitness) + "x over PyTorch" : ""));
    d.set("parent_source", pc.source);
    if (!pc.report.empty()) d.set("parent_report", pc.report.substr(0, 4000));
    Diagnosis diag = diagnose(*parent, spec, pc.report, backend);
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

// The best kernel so far as an exemplar, when it is not the parent itself.
void describe_best(mu::data& d, const Proposal& p, const SearchGraph& g, const OperatorContext& ctx) {
  const uint64_t parent = p.parents.empty() ? 0 : p.parents[0];
  if (!ctx.best.id || ctx.best.id == parent) return;
  const NodeRecord* b = g.find(ctx.best.id);
  if (!b) return;
  mu::data ex;
  mu::data list{mu::data::type::list};
  mu::data e;
  e.set("id", std::to_string(b->id));
  e.set("speedup", std::to_string(b->fitness));
  list.push_back(e);
  ex.set("items", list);
  d.set("exemplars", ex);
}

// Knowledge-base notes: those the deep-search agent retrieved (ctx.knowledge), else retrieved here.
void describe_knowledge(mu::data& d, const KnowledgeBase& kb, const KbQuery& query, const OperatorContext& ctx) {
  auto hits = ctx.knowledge_given ? ctx.knowledge : kb.search(query);
  if (hits.empty()) return;
  mu::data list{mu::data::type::list};
  for (auto& h : hits)
    for (auto& doc : kb.documents())
      if (doc.path == h.path) {
        mu::data e;
        e.set("title", doc.title);
        e.set("path", doc.path);
        e.set("text", doc.body.substr(0, 2500));
        list.push_back(e);
      }
  mu::data kn;
  kn.set("items", list);
  d.set("knowledge", kn);
}

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
  if (!constraints_.empty()) d.set("hardware_constraints", constraints_);
  describe_problem(d, spec_, backend_, kernelbench());
  d.set("task", task_text(p.op, kernelbench()));
  const std::string diagnosis = describe_parents(d, p, g, ctx, spec_, backend_);
  describe_best(d, p, g, ctx);
  if (kb_) {
    const std::string query = spec_.name + " " + shape_text(spec_.tags) + (diagnosis.empty() ? "" : " " + diagnosis);
    describe_knowledge(d, *kb_, {query, hardware_, spec_.name, 2}, ctx);
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

Expected<Offspring> LlmOperator::make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) {
  auto [system, user] = prompts(p, g, ctx);
  const std::string model = pick_model(rng);
  const std::string* parent_source =
      ctx.parents.empty() || ctx.parents[0].source.empty() ? nullptr : &ctx.parents[0].source;
  std::string note, transcript;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string asked = note.empty() ? user
                                           : user + "\n\n# Note\nYour previous reply could not be used: " + note +
                                                 ". Answer with the complete source in one ```" + fence() + " block.";
    auto reply = client_->complete(system, asked, model);
    if (!reply) return Expected<Offspring>::failure("LLM: " + reply.error());
    if (!transcript.empty()) transcript += "\n\n----- retry (the reply above could not be used: " + note + ") -----\n";
    transcript += reply->text;
    auto code = extract_code(reply->text);
    std::string patched;  // ", a diff on node N" when the code is the parent patched by the reply
    if (!code) {
      // A diff against the parent is applied to the parent's source; one that does not apply is asked again.
      const std::string diff = scan_reply(reply->text).diff;
      if (diff.empty()) {
        note = code.error();
        continue;
      }
      if (!parent_source) {
        note = "the reply is a diff, but there is no parent kernel to apply it to; a full source file is required";
        continue;
      }
      auto applied = apply_unified_diff(*parent_source, diff, "the parent");
      if (!applied) {
        note = "your diff could not be applied: " + applied.error();
        continue;
      }
      if (!defines_kernel(*applied)) {
        note = "your diff, applied to the parent, leaves no source defining the kernel";
        continue;
      }
      code = std::move(applied);
      patched = ", a diff on node " + std::to_string(p.parents.empty() ? ctx.parents[0].id : p.parents[0]);
    }
    Offspring o;
    o.candidate.source = *code;
    o.candidate.language = kernelbench() ? "python" : backend_ == "cuda" ? "cuda" : "cpp";
    o.candidate.provenance = "llm " + model + " (" + operation_name(p.op) + patched + ")";
    o.params["source"] = std::to_string(std::hash<std::string>{}(*code));  // identical kernels are duplicates
    o.prompt = "[model] " + model + "\n[system]\n" + system + "\n[user]\n" + asked;
    o.reply = transcript;  // the replies as received (a diff stays a diff; the source is the patched parent)
    return o;
  }
  return Expected<Offspring>::failure("LLM replies could not be used after 3 attempts: " + note);
}

}  // namespace kevolve
