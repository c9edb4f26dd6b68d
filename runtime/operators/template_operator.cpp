#include "runtime/operators/template_operator.hpp"

#include <cstdio>

#include <algorithm>
#include <set>

#include "runtime/core/expr.hpp"
#include "runtime/operators/diagnosis.hpp"

namespace kevolve {

namespace {

// The numeric parameters a constraint names, as indices.
std::set<size_t> named_params(const std::string& constraint, const std::vector<ParamDef>& params) {
  std::set<size_t> out;
  for (auto& name : symbols_of(constraint))
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].numeric && params[i].name == name) out.insert(i);
  return out;
}

// Position of the parameter's current value in its list (values.size() when it is unset or not one of them).
size_t position(const ParamDef& d, const Params& p) {
  const auto it = p.find(d.name);
  if (it == p.end()) return d.values.size();
  return static_cast<size_t>(std::find(d.values.begin(), d.values.end(), it->second) - d.values.begin());
}

}  // namespace

TemplateOperator::TemplateOperator(KernelTemplate t) : t_(std::move(t)) {
  std::set<std::pair<size_t, size_t>> pairs;
  for (const auto* list : {&t_.constraints, &t_.hardware_constraints})
    for (auto& c : *list) {
      const auto named = named_params(c, t_.params);
      for (auto a = named.begin(); a != named.end(); ++a)
        for (auto b = std::next(a); b != named.end(); ++b) pairs.insert({*a, *b});
    }
  coupled_.assign(pairs.begin(), pairs.end());
}

Params TemplateOperator::trade(const Params& parent, Rng& rng) const {
  std::vector<std::pair<size_t, size_t>> moves;  // (up, down) with room on both sides
  for (auto [a, b] : coupled_) {
    const ParamDef &da = t_.params[a], &db = t_.params[b];
    const size_t pa = position(da, parent), pb = position(db, parent);
    if (pa >= da.values.size() || pb >= db.values.size()) continue;
    if (pa + 1 < da.values.size() && pb > 0) moves.push_back({a, b});
    if (pb + 1 < db.values.size() && pa > 0) moves.push_back({b, a});
  }
  if (moves.empty()) return parent;
  const auto [up, down] = moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng)];
  Params p = parent;
  const ParamDef &du = t_.params[up], &dd = t_.params[down];
  p[du.name] = du.values[position(du, parent) + 1];
  p[dd.name] = dd.values[position(dd, parent) - 1];
  return p;
}

Params TemplateOperator::mutate(const Params& parent, Rng& rng) const {
  Params p = parent;
  std::uniform_int_distribution<size_t> which(0, t_.params.size() - 1);
  std::uniform_real_distribution<double> coin(0, 1);
  const int changes = coin(rng) < 0.3 ? 2 : 1;
  for (int c = 0; c < changes; ++c) {
    const ParamDef& d = t_.params[which(rng)];
    const long cur = static_cast<long>(position(d, p));
    long next;
    if (coin(rng) < 0.2) {
      next = static_cast<long>(std::uniform_int_distribution<size_t>(0, d.values.size() - 1)(rng));
    } else {
      next = cur + (coin(rng) < 0.5 ? -1 : 1);
      if (next < 0) next = 1;
      if (next >= static_cast<long>(d.values.size())) next = static_cast<long>(d.values.size()) - 2;
      next = std::clamp<long>(next, 0, static_cast<long>(d.values.size()) - 1);
    }
    p[d.name] = d.values[static_cast<size_t>(next)];
  }
  return p;
}

Params TemplateOperator::directed_mutate(const Params& parent, const std::string& summary, Rng& rng) const {
  std::uniform_real_distribution<double> coin(0, 1);
  const bool memory = summary.rfind("memory-bound", 0) == 0, compute = summary.rfind("compute-bound", 0) == 0;
  if ((!memory && !compute) || coin(rng) < 0.25) return mutate(parent, rng);
  // Memory-bound: more bytes in flight (widths) or fewer passes (cache: values kept in registers).
  static const char* const widths[] = {"threads", "vec", "unroll", "chunk", "block", "group", "dchunk", "cache"};
  std::vector<const ParamDef*> raise, change;
  for (auto& d : t_.params) {
    bool width = false;
    for (auto w : widths) width |= d.name == w;
    if (width && d.numeric && position(d, parent) + 1 < d.values.size()) raise.push_back(&d);
    if (!d.numeric) change.push_back(&d);
  }
  Params p = parent;
  // Compute-bound: mostly an algorithm choice. Memory-bound: sometimes too, since a kernel below the
  // bandwidth limit with wide accesses is often held back by its arithmetic (e.g. an accurate exp).
  if (!change.empty() && (raise.empty() || coin(rng) < (compute ? 0.6 : 0.25))) {
    const ParamDef* d = change[std::uniform_int_distribution<size_t>(0, change.size() - 1)(rng)];
    std::vector<std::string> others;
    for (auto& v : d->values)
      if (v != parent.at(d->name)) others.push_back(v);
    if (!others.empty()) p[d->name] = others[std::uniform_int_distribution<size_t>(0, others.size() - 1)(rng)];
    return p;
  }
  // Memory-bound, one in five: a trade between two coupled parameters (the same product in another shape).
  if (!coupled_.empty() && coin(rng) < 0.2)
    if (Params q = trade(parent, rng); q != parent) return q;
  if (raise.empty()) return mutate(parent, rng);
  const ParamDef* d = raise[std::uniform_int_distribution<size_t>(0, raise.size() - 1)(rng)];
  p[d->name] = d->values[position(*d, parent) + 1];
  return p;
}

std::string TemplateOperator::warm_start(const Lessons& l) {
  for (auto& e : l.best) {
    bool valid = e.params.size() == t_.params.size();
    for (auto& d : t_.params) {
      auto it = e.params.find(d.name);
      valid =
          valid && it != e.params.end() && std::find(d.values.begin(), d.values.end(), it->second) != d.values.end();
    }
    if (!valid || !t_.violated(e.params).empty()) continue;
    warm_ = e;
    char f[32];
    std::snprintf(f, sizeof f, "%.2fx", e.fitness);
    return "starting from the best earlier kernel (search " + e.search + ", node " + std::to_string(e.node) + ", " + f +
           ")";
  }
  return {};
}

Params TemplateOperator::crossover(const Params& a, const Params& b, Rng& rng) const {
  Params p;
  std::bernoulli_distribution pick(0.5);
  for (auto& d : t_.params) p[d.name] = pick(rng) ? a.at(d.name) : b.at(d.name);
  return p;
}

Expected<Offspring> TemplateOperator::finish(const Params& params, const std::string& how) const {
  auto src = t_.render(params);
  if (!src) return Expected<Offspring>::failure(src.error());
  Offspring o;
  o.params = params;
  o.candidate.language = t_.backend == "cpu" ? "cpp" : t_.backend;
  o.candidate.source = *src;
  o.candidate.parameters = params;
  o.candidate.provenance = "template " + t_.dir + " (" + how + ")";
  return o;
}

Expected<Offspring> TemplateOperator::make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext&) {
  if (p.op == Operation::seed) {
    if (warm_)
      return finish(warm_->params,
                    "warm start: the best kernel of search " + warm_->search + ", node " + std::to_string(warm_->node));
    return finish(t_.defaults(), "default parameters");
  }
  if (p.op == Operation::repair)
    return Expected<Offspring>::failure("the template operator cannot repair failed kernels");
  std::vector<const NodeRecord*> parents;
  for (auto id : p.parents) {
    const NodeRecord* n = g.find(id);
    if (!n) return Expected<Offspring>::failure("unknown parent node " + std::to_string(id));
    parents.push_back(n);
  }
  if (parents.empty())
    return Expected<Offspring>::failure("'" + std::string(operation_name(p.op)) + "' needs a parent");
  for (int attempt = 0; attempt < 64; ++attempt) {
    Params child = p.op == Operation::crossover && parents.size() == 2
                       ? (attempt < 8 ? crossover(parents[0]->params, parents[1]->params, rng)
                                      : mutate(crossover(parents[0]->params, parents[1]->params, rng), rng))
                   : directed_ && attempt < 16
                       ? directed_mutate(parents[0]->params, diagnose(*parents[0], spec_, "", t_.backend).summary, rng)
                       : mutate(parents[0]->params, rng);
    if (!t_.violated(child).empty() || g.has_params(child)) continue;
    return finish(child, std::string(operation_name(p.op)) + " of node " + std::to_string(parents[0]->id) +
                             (parents.size() > 1 ? " and " + std::to_string(parents[1]->id) : ""));
  }
  return Expected<Offspring>::failure("no new parameter set near node " + std::to_string(parents[0]->id));
}

}  // namespace kevolve
