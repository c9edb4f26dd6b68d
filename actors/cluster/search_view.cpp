#include "actors/cluster/search_view.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "runtime/config/run_config.hpp"
#include "runtime/core/json.hpp"
#include "runtime/records/operation.hpp"
#include "runtime/search/device_classes.hpp"

namespace kevolve::cluster {
namespace {

using json::number;
using json::quote;

// What the stored config says about the search (backend, budget); defaults when it cannot be read.
RunConfig stored_config(const SearchRecord& r) {
  auto c = parse_run_config(r.config_text, "search " + r.id);
  return c ? *c : RunConfig{};
}

std::string state_of(const SearchRecord& r, const SearchStatus* live) {
  if (r.finished || (live && live->finished)) return "finished";
  if (!live) return "stopped";
  return live->paused ? "paused" : "running";
}

const NodeRecord* find(const std::vector<NodeRecord>& nodes, uint64_t id) {
  for (auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

// The summary's fields, without the braces (the tree adds its own after them).
std::string summary_fields(const SearchRecord& r, const std::vector<NodeRecord>& nodes, const SearchStatus* live,
                           uint64_t best, Store* store) {
  const NodeCounts c = count_nodes(nodes);
  const RunConfig cfg = stored_config(r);
  const NodeRecord* b = find(nodes, best);
  std::string device_class = cfg.device_class;
  if (device_class.empty() && b) device_class = b->device_class;
  const double rate = live ? live->rate : 0;
  const int64_t budget = cfg.budget.max_evaluations;
  const bool running = state_of(r, live) == "running";
  std::ostringstream o;
  o << "\"id\":" << quote(r.id) << ",\"problem\":" << quote(r.problem) << ",\"strategy\":" << quote(r.strategy)
    << ",\"backend\":" << quote(cfg.backend) << ",\"device_class\":" << quote(device_class)
    << ",\"state\":" << quote(state_of(r, live)) << ",\"stop_reason\":" << quote(r.stop_reason)
    << ",\"evaluated\":" << c.evaluated << ",\"correct\":" << c.correct << ",\"failed\":" << c.failed
    << ",\"in_flight\":" << c.in_flight << ",\"best_node\":" << (b ? b->id : 0)
    << ",\"best_fitness\":" << number(b ? b->fitness : 0) << ",\"rate\":" << number(rate)
    << ",\"per_minute\":" << number(rate * 60) << ",\"max_evaluations\":" << budget << ",\"eta_s\":"
    << (running && rate > 0 && budget > c.evaluated ? number(static_cast<double>(budget - c.evaluated) / rate)
                                                    : std::string("null"));
  const double vs_compile = store && b ? compile_speedup_of(*store, r.id, b->id) : 0;
  o << ",\"best_vs_compile\":" << (vs_compile > 0 ? number(vs_compile) : std::string("null"));
  return o.str();
}

// Best-so-far over the evaluations (in node order, failures count): one point per new best, and the last.
std::string curve_json(const std::vector<NodeRecord>& nodes) {
  std::ostringstream o;
  o << "[";
  double best = 0;
  int64_t i = 0;
  bool first = true;
  for (auto& n : nodes) {
    if (!n.scored()) continue;
    ++i;
    if (!(n.correct() && n.fitness > best)) continue;
    best = n.fitness;
    o << (first ? "" : ",") << "[" << i << "," << number(best) << "," << n.id << "]";
    first = false;
  }
  if (i > 0) o << (first ? "" : ",") << "[" << i << "," << number(best) << ",0]";
  return o.str() + "]";
}

// Statuses of the evaluations in (at most) 20 consecutive slices: how the failure mix moved.
std::string mix_json(const std::vector<NodeRecord>& nodes) {
  std::vector<const NodeRecord*> scored;
  for (auto& n : nodes)
    if (n.scored()) scored.push_back(&n);
  const size_t slices = std::min<size_t>(20, scored.size());
  std::ostringstream o;
  o << "[";
  for (size_t s = 0; s < slices; ++s) {
    const size_t lo = s * scored.size() / slices, hi = (s + 1) * scored.size() / slices;
    std::map<std::string, int64_t> by;
    for (size_t i = lo; i < hi; ++i) ++by[status_name(scored[i]->status)];
    o << (s ? "," : "") << "{\"upto\":" << hi << ",\"counts\":{";
    bool first = true;
    for (auto& [k, v] : by) {
      o << (first ? "" : ",") << quote(k) << ":" << v;
      first = false;
    }
    o << "}}";
  }
  return o.str() + "]";
}

std::string node_fields(const NodeRecord& n) {
  std::ostringstream o;
  o << "\"id\":" << n.id << ",\"parents\":[";
  for (size_t i = 0; i < n.parents.size(); ++i) o << (i ? "," : "") << n.parents[i];
  o << "],\"op\":" << quote(operation_name(n.op)) << ",\"state\":" << quote(node_state_name(n.state))
    << ",\"status\":" << quote(n.scored() ? status_name(n.status) : "in_flight") << ",\"fitness\":" << number(n.fitness)
    << ",\"device_class\":" << quote(n.device_class);
  return o.str();
}

}  // namespace

uint64_t best_node(const std::vector<NodeRecord>& nodes) {
  const NodeRecord* b = nullptr;
  for (auto& n : nodes)
    if (n.correct() && (!b || n.fitness > b->fitness || (n.fitness == b->fitness && n.id < b->id))) b = &n;
  return b ? b->id : 0;
}

double compile_speedup_of(Store& store, const std::string& search, uint64_t node) {
  auto t = store.artifact(search, node, "timing");
  if (!t) return 0;
  const std::string key = "\"compile_speedup\":";
  const auto at = t->find(key);
  return at == std::string::npos ? 0 : std::max(0.0, std::atof(t->c_str() + at + key.size()));
}

std::string search_summary_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes,
                                const SearchStatus* live, Store* store) {
  std::string o = "{";
  o += summary_fields(record, nodes, live, best_node(nodes), store);
  o += "}";
  return o;
}

std::set<uint64_t> notable_nodes(const std::vector<NodeRecord>& nodes, uint64_t best, size_t all_up_to, size_t fittest,
                                 size_t latest) {
  std::set<uint64_t> keep;
  if (nodes.size() <= all_up_to) {
    for (auto& n : nodes) keep.insert(n.id);
    return keep;
  }
  std::map<uint64_t, const NodeRecord*> by_id;
  for (auto& n : nodes) by_id[n.id] = &n;
  for (uint64_t id = best; id && by_id.count(id) && keep.insert(id).second;)
    id = by_id[id]->parents.empty() ? 0 : by_id[id]->parents.front();
  std::vector<const NodeRecord*> fit;
  for (auto& n : nodes)
    if (n.correct()) fit.push_back(&n);
  std::sort(fit.begin(), fit.end(), [](auto* a, auto* b) { return a->fitness > b->fitness; });
  for (size_t i = 0; i < fit.size() && i < fittest; ++i) keep.insert(fit[i]->id);
  for (size_t i = nodes.size() > latest ? nodes.size() - latest : 0; i < nodes.size(); ++i) keep.insert(nodes[i].id);
  return keep;
}

std::string search_tree_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes, const SearchStatus* live,
                             uint64_t best, size_t max_nodes, Store* store) {
  if (!best) best = best_node(nodes);
  std::ostringstream o;
  o << "{" << summary_fields(record, nodes, live, best, store)
    << ",\"baselines\":[{\"name\":\"reference\",\"speedup\":1}";
  for (auto& n : nodes)
    if (n.parents.empty() && n.correct()) {
      o << ",{\"name\":\"seed (node " << n.id << ")\",\"speedup\":" << number(n.fitness) << "}";
      break;
    }
  o << "],\"curve\":" << curve_json(nodes) << ",\"mix\":" << mix_json(nodes);
  // A large search: the notable nodes and every ancestor of theirs (the tree stays connected).
  std::set<uint64_t> shown;
  if (nodes.size() > max_nodes) {
    std::map<uint64_t, const NodeRecord*> by_id;
    for (auto& n : nodes) by_id[n.id] = &n;
    const size_t part = std::max<size_t>(1, max_nodes / 4);
    for (uint64_t id : notable_nodes(nodes, best, max_nodes, part, 2 * part))
      for (uint64_t a = id; a && by_id.count(a) && shown.insert(a).second;)
        a = by_id[a]->parents.empty() ? 0 : by_id[a]->parents.front();
  }
  o << ",\"nodes_total\":" << nodes.size() << ",\"nodes_shown\":" << (shown.empty() ? nodes.size() : shown.size())
    << ",\"nodes\":[";
  bool first = true;
  for (auto& n : nodes) {
    if (!shown.empty() && !shown.count(n.id)) continue;
    o << (first ? "" : ",") << "{" << node_fields(n) << "}";
    first = false;
  }
  o << "]}";
  return o.str();
}

std::string node_detail_json(Store& store, const std::string& search, const std::vector<NodeRecord>& nodes,
                             uint64_t node, size_t max_artifact) {
  const NodeRecord* n = find(nodes, node);
  if (!n) return "";
  auto artifact = [&](uint64_t id, const char* kind) {
    auto a = store.artifact(search, id, kind);
    if (!a) return std::string("null");
    return quote(a->size() > max_artifact ? a->substr(0, max_artifact) + "\n[... cut]" : *a);
  };
  std::ostringstream o;
  o << "{\"search\":" << quote(search) << "," << node_fields(*n) << ",\"params\":{";
  bool first = true;
  for (auto& [k, v] : n->params) {
    o << (first ? "" : ",") << quote(k) << ":" << quote(v);
    first = false;
  }
  o << "},\"reason\":" << quote(n->reason) << ",\"message\":" << quote(n->message)
    << ",\"candidate_ms\":" << number(n->candidate_ms) << ",\"reference_ms\":" << number(n->reference_ms);
  auto timing = store.artifact(search, n->id, "timing");  // stored as JSON by the search actor
  o << ",\"timing\":" << (timing && !timing->empty() && timing->front() == '{' ? *timing : std::string("null"));
  for (const char* kind : {"source", "report", "diagnosis", "profile", "compile_log", "runner_log", "prompt", "reply"})
    o << "," << quote(kind) << ":" << artifact(n->id, kind);
  o << ",\"parent_source\":" << (n->parents.empty() ? std::string("null") : artifact(n->parents.front(), "source"))
    << "}";
  return o.str();
}

}  // namespace kevolve::cluster
