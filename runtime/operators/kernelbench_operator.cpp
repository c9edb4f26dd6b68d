#include "runtime/operators/kernelbench_operator.hpp"

#include <cstdio>

#include <algorithm>
#include <set>
#include <sstream>

#include "runtime/core/expr.hpp"

namespace kevolve {
namespace {

std::string py_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    o += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return o + "\"";
}

std::string py_list(const std::vector<std::string>& names) {
  std::string o = "[";
  for (size_t i = 0; i < names.size(); ++i) o += (i ? ", " : "") + py_str(names[i]);
  return o + "]";
}

std::string py_float(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// NAME = r'''TEXT''' (the texts are C/C++ sources: a raw string keeps their backslashes as written).
Expected<std::string> raw_block(const std::string& name, const std::string& text) {
  if (text.find("'''") != std::string::npos || (!text.empty() && text.back() == '\\'))
    return Expected<std::string>::failure(
        name + " cannot be inlined as a Python raw string (it contains ''' or ends in a backslash)");
  return name + " = r'''" + text + "'''\n";
}

}  // namespace

Expected<std::string> wrap_kernel_as_model_new(const KernelWrap& w, const std::string& kernel_source,
                                               const std::string& note) {
  using R = Expected<std::string>;
  const ProblemSpec& c = w.core;
  const FamilyMatch& m = w.match;
  const std::string what = "wrapping the " + c.name + " kernel as ModelNew: ";
  if (m.inputs.size() != c.inputs.size())
    return R::failure(what + c.name + " takes " + std::to_string(c.inputs.size()) + " inputs, the family match gives " +
                      std::to_string(m.inputs.size()));
  if (m.params.size() != c.params.size())
    return R::failure(what + c.name + " takes " + std::to_string(c.params.size()) +
                      " scalar parameters, the family match gives " + std::to_string(m.params.size()));
  if (c.outputs.size() != 1)
    return R::failure(what + "only single-output kernels are wrapped; " + c.name + " has " +
                      std::to_string(c.outputs.size()));
  if (w.backend != "cpu" && w.backend != "cuda")
    return R::failure(what + "backend '" + w.backend + "' (expected cpu or cuda)");
  std::set<std::string> bound;
  std::ostringstream o;
  o << "_KV_INPUTS = [";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorSpec& t = c.inputs[i];
    if (t.dtype != DType::float32)
      return R::failure(what + "input '" + t.name + "' is " + dtype_name(t.dtype) +
                        " (only float32 kernels are wrapped)");
    for (auto& d : t.shape) {
      if (!is_symbol(d))
        return R::failure(what + "input '" + t.name + "' has the dimension '" + d +
                          "' (expected a plain shape symbol)");
      bound.insert(d);
    }
    const std::string& src = m.inputs[i];
    o << (i ? ", " : "");
    if (src.rfind("arg:", 0) == 0 && src.size() > 4 && src.find_first_not_of("0123456789", 4) == std::string::npos)
      o << "(\"arg\", " << src.substr(4) << ", " << py_list(t.shape) << ")";
    else if (src.rfind("state:", 0) == 0 && src.size() > 6)
      o << "(\"state\", " << py_str(src.substr(6)) << ", " << py_list(t.shape) << ")";
    else
      return R::failure(what + "input '" + t.name + "' comes from '" + src + "' (expected arg:I or state:NAME)");
  }
  o << "]\n_KV_OUTPUTS = [";
  const TensorSpec& out = c.outputs[0];
  if (out.dtype != DType::float32)
    return R::failure(what + "output '" + out.name + "' is " + dtype_name(out.dtype) +
                      " (only float32 kernels are wrapped)");
  for (auto& d : out.shape)
    if (!bound.count(d))
      return R::failure(what + "output '" + out.name + "' has the dimension '" + d +
                        "' (expected a symbol an input gives)");
  o << py_list(out.shape) << "]\n_KV_PARAMS = [";
  for (size_t i = 0; i < c.params.size(); ++i) {
    const std::string& src = m.params[i];
    o << (i ? ", " : "");
    if (src.rfind("attr:", 0) == 0 && src.size() > 5) {
      o << "(\"attr\", " << py_str(src.substr(5)) << ")";
    } else if (src.rfind("value:", 0) == 0) {
      double v = 0;
      try {
        v = std::stod(src.substr(6));
      } catch (const std::exception&) {
        return R::failure(what + "parameter '" + c.params[i].name + "': '" + src + "' is not a number");
      }
      o << "(\"value\", " << py_float(v) << ")";
    } else if (src == "default") {
      o << "(\"value\", " << py_float(c.params[i].value) << ")";
    } else {
      return R::failure(what + "parameter '" + c.params[i].name + "' comes from '" + src +
                        "' (expected attr:PATH, value:X or default)");
    }
  }
  o << "]\n";
  auto header = raw_block("_KV_HEADER", w.header);
  if (!header) return header;
  auto kernel = raw_block("_KV_KERNEL", kernel_source);
  if (!kernel) return kernel;
  const std::string entry = c.entry.empty() ? "kevolve_kernel" : c.entry;
  std::ostringstream s;
  s << "# KernelBench ModelNew generated by kevolve (" << note << ").\n"
    << "# The " << c.name << " " << w.backend
    << " template kernel run on the module's own tensors; family match: " << m.how << ".\n"
    << "# Self-contained: the kernel glue, the kernel and its ABI header are inlined; the problem's module is "
       "included\n"
    << "# renamed (_KevolveBase) so that ModelNew keeps its constructor, parameters and state_dict.\n"
    << w.glue << "\n\n# ---- the problem's module, renamed ----\n"
    << w.problem_source << "\n\n# ---- the kernel ----\n"
    << *header << "\n"
    << *kernel << "\n"
    << o.str() << "\n\n"
    << "class ModelNew(_KevolveBase):\n"
    << "    def __init__(self, *args, **kwargs):\n"
    << "        super().__init__(*args, **kwargs)\n"
    << "        self._kv_kernel = _kv_build(\"" << w.backend << "\", _KV_KERNEL, _KV_HEADER, " << py_str(entry)
    << ")\n\n"
    << "    def forward(self, *args):\n"
    << "        return _kv_call(self, self._kv_kernel, args, _KV_INPUTS, _KV_OUTPUTS, _KV_PARAMS, " << m.output_like
    << ")\n";
  return s.str();
}

KernelBenchOperator::KernelBenchOperator(KernelTemplate framework,
                                         std::optional<std::pair<KernelTemplate, KernelWrap>> kernel,
                                         std::optional<GeneratedFamily> generated) {
  arms_.push_back({"framework", TemplateOperator(std::move(framework)), std::nullopt});
  if (kernel) arms_.push_back({"kernel", TemplateOperator(std::move(kernel->first)), std::move(kernel->second)});
  if (generated) {
    arms_.push_back({"generated", std::nullopt, std::nullopt});
    generated_ = std::move(generated);
    seed_arm_ = arms_.size() - 1;
  }
}

void KernelBenchOperator::follow_directives() {
  const size_t k = arm_named("kernel");
  if (k >= arms_.size()) return;
  ProblemSpec s = arms_[k].wrap->core;
  // The main input's shape, folded to the kernel's rank as ModelNew folds it, binds the roofline's symbols.
  const std::vector<int64_t>& shape = arms_[k].wrap->match.shape;
  const std::vector<std::string>& dims = s.inputs.front().shape;
  if (!dims.empty() && shape.size() >= dims.size()) {
    ShapeBinding b;
    const size_t lead = shape.size() - dims.size() + 1;
    b[dims[0]] = 1;
    for (size_t i = 0; i < lead; ++i) b[dims[0]] *= shape[i];
    for (size_t i = 1; i < dims.size(); ++i) b[dims[i]] = shape[lead + i - 1];
    s.bench = s.bench_cuda = b;
  }
  arms_[k].op->follow_directives(s);
}

size_t KernelBenchOperator::arm_named(const std::string& name) const {
  for (size_t a = 0; a < arms_.size(); ++a)
    if (arms_[a].name == name) return a;
  return arms_.size();
}

size_t KernelBenchOperator::arm_of(const NodeRecord& n) const {
  auto it = n.params.find(kImpl);
  for (size_t a = 0; it != n.params.end() && a < arms_.size(); ++a)
    if (arms_[a].name == it->second) return a;
  return 0;  // a node stored before the arms existed: a framework rewrite
}

// ---- the generated arm ----------------------------------------------------------------------------------------

std::vector<Params> KernelBenchOperator::generated_seeds() const {
  std::vector<Params> seeds;
  if (!generated_) return seeds;
  const FamilySpace& sp = generated_->space;
  Params d;
  for (auto& prm : sp.params) {
    auto it = sp.defaults.find(prm.name);
    d[prm.name] = it != sp.defaults.end() ? it->second : (prm.values.empty() ? "" : prm.values.front());
  }
  seeds.push_back(d);
  for (auto& prm : sp.params) {
    if (seeds.size() >= kGeneratedSeeds) break;
    for (auto& v : prm.values) {
      if (v == d[prm.name]) continue;
      Params q = d;
      q[prm.name] = v;
      seeds.push_back(q);
      break;
    }
  }
  return seeds;
}

Params KernelBenchOperator::point_of(const NodeRecord& n) const {
  Params p;
  const FamilySpace& sp = generated_->space;
  for (auto& prm : sp.params) {
    auto it = n.params.find(prm.name);
    auto d = sp.defaults.find(prm.name);
    p[prm.name] = it != n.params.end()     ? it->second
                  : d != sp.defaults.end() ? d->second
                  : prm.values.empty()     ? ""
                                           : prm.values.front();
  }
  return p;
}

namespace {

Params labelled(Params p, const char* impl) {
  p[KernelBenchOperator::kImpl] = impl;
  return p;
}

std::string params_text(const Params& p) {
  std::string o;
  for (auto& [k, v] : p) o += (o.empty() ? "" : " ") + k + "=" + v;
  return o;
}

}  // namespace

double KernelBenchOperator::space_points() const {
  double points = 1;
  for (auto& prm : generated_->space.params) points *= static_cast<double>(std::max<size_t>(1, prm.values.size()));
  return points;
}

bool KernelBenchOperator::generated_full(const SearchGraph& g) const {
  size_t held = 0;
  for (auto& [id, n] : g.nodes()) {
    auto it = n.params.find(kImpl);
    held += it != n.params.end() && it->second == "generated";
  }
  return static_cast<double>(held) >= space_points();
}

std::optional<Params> KernelBenchOperator::unused_seed(const SearchGraph& g) const {
  for (auto& s : generated_seeds())
    if (!g.has_params(labelled(s, "generated"))) return s;
  return std::nullopt;
}

Expected<Offspring> KernelBenchOperator::generate(const Params& point) const {
  auto source = generated_->generate(point);
  if (!source)
    return Expected<Offspring>::failure("generated kernel (family " + generated_->family + ", params " +
                                        params_text(point) + "): " + source.error());
  Offspring o;
  o.params = labelled(point, "generated");
  o.candidate.language = "python";
  o.candidate.entry = "ModelNew";
  o.candidate.source = *source;
  o.candidate.parameters = point;
  o.candidate.provenance = "generated kernel (family " + generated_->family + ", params " + params_text(point) + ")";
  return o;
}

Expected<Offspring> KernelBenchOperator::within_generated(const Proposal& p, const SearchGraph& g, Rng& rng) {
  using R = Expected<Offspring>;
  const FamilySpace& sp = generated_->space;
  auto taken = [&](const Params& q) { return g.has_params(labelled(q, "generated")); };
  if (p.op == Operation::seed) {
    if (warm_generated_ && !taken(*warm_generated_)) return generate(*warm_generated_);
    if (auto s = unused_seed(g)) return generate(*s);
    return generate(generated_seeds().front());  // a seed the graph already holds: asked for, so given
  }
  if (p.parents.empty()) return R::failure("'" + std::string(operation_name(p.op)) + "' needs a parent");
  const NodeRecord* parent = g.find(p.parents[0]);
  if (!parent) return R::failure("unknown parent node " + std::to_string(p.parents[0]));
  const Params base = point_of(*parent);
  if (p.op == Operation::crossover && p.parents.size() >= 2) {
    if (const NodeRecord* other = g.find(p.parents[1])) {
      const Params b = point_of(*other);
      std::bernoulli_distribution coin(0.5);
      for (int attempt = 0; attempt < 8; ++attempt) {
        Params q;
        for (auto& [k, v] : base) q[k] = coin(rng) ? v : b.at(k);
        if (q != base && q != b && !taken(q)) return generate(q);
      }
    }
  }
  // A mutation: one parameter of the parent to another of its allowed values, a point the graph does not hold.
  std::vector<Params> moves;
  for (auto& prm : sp.params)
    for (auto& v : prm.values) {
      if (v == base.at(prm.name)) continue;
      Params q = base;
      q[prm.name] = v;
      if (!taken(q)) moves.push_back(std::move(q));
    }
  if (!moves.empty()) return generate(moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng)]);
  // Every neighbour is taken: an unused seed point, else a random point of the space the graph does not hold.
  if (auto s = unused_seed(g)) return generate(*s);
  if (space_points() <= 4096) {  // small: every free point, one picked at random
    std::vector<Params> free;
    std::vector<size_t> at(sp.params.size(), 0);
    for (bool more = true; more;) {
      Params q = base;
      for (size_t i = 0; i < sp.params.size(); ++i)
        if (!sp.params[i].values.empty()) q[sp.params[i].name] = sp.params[i].values[at[i]];
      if (!taken(q)) free.push_back(std::move(q));
      more = false;
      for (size_t i = 0; i < sp.params.size() && !more; ++i) {
        if (++at[i] < sp.params[i].values.size())
          more = true;
        else
          at[i] = 0;
      }
    }
    if (!free.empty()) return generate(free[std::uniform_int_distribution<size_t>(0, free.size() - 1)(rng)]);
  } else {
    for (int attempt = 0; attempt < 256; ++attempt) {
      Params q = base;
      for (auto& prm : sp.params)
        if (!prm.values.empty())
          q[prm.name] = prm.values[std::uniform_int_distribution<size_t>(0, prm.values.size() - 1)(rng)];
      if (!taken(q)) return generate(q);
    }
  }
  return R::failure("every generated kernel near node " + std::to_string(parent->id) + " (family " +
                    generated_->family + ") has been tried");
}

// ---- the template arms and the choice of arm --------------------------------------------------------------------

Expected<Offspring> KernelBenchOperator::within(size_t a, const Proposal& p, const SearchGraph& g, Rng& rng,
                                                const OperatorContext& ctx) {
  Arm& arm = arms_[a];
  if (!arm.op) return within_generated(p, g, rng);
  // Crossover builds the child from the template's own parameters: the arm label is set again below, and a
  // child the graph already holds is tried again a few times.
  for (int attempt = 0;; ++attempt) {
    auto o = arm.op->make(p, g, rng, ctx);
    if (!o) return o;
    o->params[kImpl] = arm.name;
    if (g.has_params(o->params) && attempt < 8 && p.op != Operation::seed) continue;
    if (arm.wrap) {
      auto wrapped = wrap_kernel_as_model_new(*arm.wrap, o->candidate.source, o->candidate.provenance);
      if (!wrapped) return Expected<Offspring>::failure(wrapped.error());
      o->candidate.source = *wrapped;
      o->candidate.language = "python";
      o->candidate.provenance += ", wrapped as ModelNew";
    }
    return o;
  }
}

Expected<Offspring> KernelBenchOperator::make(const Proposal& p, const SearchGraph& g, Rng& rng,
                                              const OperatorContext& ctx) {
  if (p.op == Operation::seed) return within(seed_arm_, p, g, rng, ctx);
  if (p.op == Operation::repair)
    return Expected<Offspring>::failure("the template operator cannot repair failed kernels");
  if (p.parents.empty())
    return Expected<Offspring>::failure("'" + std::string(operation_name(p.op)) + "' needs a parent");
  const NodeRecord* parent = g.find(p.parents[0]);
  if (!parent) return Expected<Offspring>::failure("unknown parent node " + std::to_string(p.parents[0]));
  const size_t from = arm_of(*parent);
  size_t to = from;
  const size_t gen = arm_named("generated");
  if (arms_.size() > 1) {
    // The newest and the best correct node of each arm.
    std::vector<const NodeRecord*> newest(arms_.size(), nullptr), best(arms_.size(), nullptr);
    for (auto& [id, n] : g.nodes()) {
      const size_t a = arm_of(n);
      newest[a] = &n;
      if (n.correct() && (!best[a] || n.fitness > best[a]->fitness)) best[a] = &n;
    }
    // An arm with no node yet first (the kernel arms before the rewrites), then the generated arm with odds 1/2
    // and the others evenly (all evenly without it).
    to = arms_.size();
    for (size_t a = arms_.size(); a-- > 0 && to == arms_.size();)
      if (!newest[a]) to = a;
    if (to == arms_.size()) {
      if (gen < arms_.size() && std::bernoulli_distribution(0.5)(rng))
        to = gen;
      else if (gen < arms_.size())
        to = std::uniform_int_distribution<size_t>(0, arms_.size() - 2)(rng);  // the generated arm is the last
      else
        to = std::uniform_int_distribution<size_t>(0, arms_.size() - 1)(rng);
    }
    if (to == gen && generated_full(g))  // every point of the generated space is in the graph: another arm
      to = std::uniform_int_distribution<size_t>(0, arms_.size() - 2)(rng);
    if (to != from) {
      if (to == gen)
        if (auto s = unused_seed(g)) return generate(*s);
      if (const NodeRecord* base = best[to] ? best[to] : newest[to])
        return within(to, {Operation::mutate, {base->id}, p.island}, g, rng, ctx);
      return within(to, {Operation::seed, {}, p.island}, g, rng, ctx);
    }
  }
  Proposal q = p;
  if (q.op == Operation::crossover &&
      (q.parents.size() < 2 || !g.find(q.parents[1]) || arm_of(*g.find(q.parents[1])) != from))
    q = {Operation::mutate, {p.parents[0]}, p.island};  // parents of different arms do not cross
  return within(from, q, g, rng, ctx);
}

std::string KernelBenchOperator::warm_start(const Lessons& l) {
  for (auto& e : l.best) {
    auto it = e.params.find(kImpl);
    for (size_t a = 0; it != e.params.end() && a < arms_.size(); ++a) {
      if (arms_[a].name != it->second) continue;
      if (!arms_[a].op) {  // the generated arm: a point of this problem's space
        bool valid = e.params.size() == generated_->space.params.size() + 1;
        for (auto& prm : generated_->space.params) {
          auto v = e.params.find(prm.name);
          valid = valid && v != e.params.end() &&
                  std::find(prm.values.begin(), prm.values.end(), v->second) != prm.values.end();
        }
        if (!valid) continue;
        Params point = e.params;
        point.erase(kImpl);
        warm_generated_ = point;
        seed_arm_ = a;
        char f[32];
        std::snprintf(f, sizeof f, "%.2fx", e.fitness);
        return "starting from the best earlier kernel (search " + e.search + ", node " + std::to_string(e.node) + ", " +
               f + ") (generated)";
      }
      Lessons one = l;
      one.best = {e};
      one.best[0].params.erase(kImpl);
      if (auto how = arms_[a].op->warm_start(one); !how.empty()) {
        seed_arm_ = a;
        return how + " (" + arms_[a].name + ")";
      }
    }
  }
  return {};
}

}  // namespace kevolve
