#include "runtime/views/search_view.hpp"

#include <algorithm>
#include <map>
#include <memory>
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

// The summary's fields, without the braces (the tree adds its own after them).
std::string summary_fields(const SearchRecord& r, const SearchDigest& d, const SearchStatus* live, uint64_t best,
                           double best_fitness, const std::string& best_class, Store* store) {
  const NodeCounts& c = d.counts();
  const RunConfig cfg = stored_config(r);
  std::string device_class = cfg.device_class;
  if (device_class.empty()) device_class = best_class;
  const double rate = live ? live->rate : 0;
  const int64_t budget = cfg.budget.max_evaluations;
  const bool running = state_of(r, live) == "running";
  std::ostringstream o;
  o << "\"id\":" << quote(r.id) << ",\"problem\":" << quote(r.problem) << ",\"strategy\":" << quote(r.strategy)
    << ",\"backend\":" << quote(cfg.backend) << ",\"device_class\":" << quote(device_class)
    << ",\"state\":" << quote(state_of(r, live)) << ",\"stop_reason\":" << quote(r.stop_reason)
    << ",\"evaluated\":" << c.evaluated << ",\"correct\":" << c.correct << ",\"failed\":" << c.failed
    << ",\"in_flight\":" << c.in_flight << ",\"best_node\":" << best << ",\"best_fitness\":" << number(best_fitness)
    << ",\"rate\":" << number(rate) << ",\"per_minute\":" << number(rate * 60) << ",\"max_evaluations\":" << budget
    << ",\"eta_s\":"
    << (running && rate > 0 && budget > c.evaluated ? number(static_cast<double>(budget - c.evaluated) / rate)
                                                    : std::string("null"));
  const double vs_compile = store && best ? compile_speedup_of(*store, r.id, best) : 0;
  o << ",\"best_vs_compile\":" << (vs_compile > 0 ? number(vs_compile) : std::string("null"));
  return o.str();
}

// The digest's best, or the node `best` names (looked up when it is another).
std::string summary_of(const SearchRecord& r, const SearchDigest& d, const NodeLookup* lookup, const SearchStatus* live,
                       uint64_t best, Store* store) {
  if (!best || best == d.best()) return summary_fields(r, d, live, d.best(), d.best_fitness(), d.best_class(), store);
  const auto n = lookup ? (*lookup)(best) : std::nullopt;
  return n ? summary_fields(r, d, live, n->id, n->fitness, n->device_class, store)
           : summary_fields(r, d, live, 0, 0, "", store);
}

// Best-so-far over the evaluations (in node order, failures count): one point per new best, and the last.
std::string curve_json(const SearchDigest& d) {
  std::ostringstream o;
  o << "[";
  bool first = true;
  for (auto& p : d.curve()) {
    o << (first ? "" : ",") << "[" << p.index << "," << number(p.best) << "," << p.node << "]";
    first = false;
  }
  return o.str() + "]";
}

// Statuses of the evaluations in 10 to 20 consecutive slices (fewer when short): how the failure mix moved.
std::string mix_json(const SearchDigest& d) {
  std::ostringstream o;
  o << "[";
  bool first_slice = true;
  for (auto& s : d.mix()) {
    o << (first_slice ? "" : ",") << "{\"upto\":" << s.upto << ",\"counts\":{";
    bool first = true;
    for (auto& [k, v] : s.counts) {
      o << (first ? "" : ",") << quote(k) << ":" << v;
      first = false;
    }
    o << "}}";
    first_slice = false;
  }
  return o.str() + "]";
}

// A capped tree lists the `part` fittest and the 2 * `part` latest (with their ancestors).
size_t tree_part(size_t max_nodes) { return std::max<size_t>(1, max_nodes / 4); }

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

NodeLookup store_lookup(Store& store, const std::string& search) {
  return [&store, search](uint64_t id) -> std::optional<NodeRecord> {
    auto n = store.node(search, id);
    if (!n) return std::nullopt;
    return std::move(*n);
  };
}

NodeLookup memory_lookup(const std::vector<NodeRecord>& nodes) {
  auto by_id = std::make_shared<std::map<uint64_t, const NodeRecord*>>();
  for (auto& n : nodes) (*by_id)[n.id] = &n;
  return [by_id](uint64_t id) -> std::optional<NodeRecord> {
    auto it = by_id->find(id);
    if (it == by_id->end()) return std::nullopt;
    return *it->second;
  };
}

DigestLimits tree_limits(size_t max_nodes) {
  DigestLimits l;
  l.keep_all = max_nodes;
  if (max_nodes == SIZE_MAX) return l;  // every node listed: no notable ones needed
  l.fittest = tree_part(max_nodes);
  l.latest = 2 * tree_part(max_nodes);
  return l;
}

Expected<SearchDigest> read_digest(Store& store, const std::string& search, DigestLimits limits) {
  SearchDigest d(limits);
  Status st = store.each_node(search, false, [&](NodeRecord& n) { d.add(n); });
  if (!st) return Expected<SearchDigest>::failure(st);
  return d;
}

double compile_speedup_of(Store& store, const std::string& search, uint64_t node) {
  auto t = store.artifact(search, node, "timing");
  if (!t) return 0;
  const std::string key = "\"compile_speedup\":";
  const auto at = t->find(key);
  return at == std::string::npos ? 0 : std::max(0.0, std::atof(t->c_str() + at + key.size()));
}

std::string search_summary_json(const SearchRecord& record, const SearchDigest& digest, const SearchStatus* live,
                                Store* store) {
  std::string o = "{";
  o += summary_of(record, digest, nullptr, live, 0, store);
  o += "}";
  return o;
}

std::set<uint64_t> notable_nodes(const SearchDigest& digest, const NodeLookup& lookup, uint64_t best, size_t all_up_to,
                                 size_t fittest, size_t latest) {
  std::set<uint64_t> keep;
  if (digest.all() && static_cast<size_t>(digest.total()) <= all_up_to) {
    for (auto& n : *digest.all()) keep.insert(n.id);
    return keep;
  }
  for (uint64_t id = best; id && !keep.count(id);) {  // the best's line of ancestors
    const auto n = lookup(id);
    if (!n) break;
    keep.insert(id);
    id = n->parents.empty() ? 0 : n->parents.front();
  }
  const auto fit = digest.fittest();
  for (size_t i = 0; i < fit.size() && i < fittest; ++i) keep.insert(fit[i]);
  const auto last = digest.latest();
  for (size_t i = last.size() > latest ? last.size() - latest : 0; i < last.size(); ++i) keep.insert(last[i]);
  return keep;
}

std::string search_tree_json(const SearchRecord& record, const SearchDigest& digest, const NodeLookup& lookup,
                             const SearchStatus* live, uint64_t best, size_t max_nodes, Store* store) {
  if (!best) best = digest.best();
  std::ostringstream o;
  o << "{" << summary_of(record, digest, &lookup, live, best, store)
    << ",\"baselines\":[{\"name\":\"reference\",\"speedup\":1}";
  if (digest.seed())
    o << ",{\"name\":\"seed (node " << digest.seed() << ")\",\"speedup\":" << number(digest.seed_fitness()) << "}";
  o << "],\"curve\":" << curve_json(digest) << ",\"mix\":" << mix_json(digest);
  // A large search: the best's line, then the fittest, then the latest, each with every ancestor of theirs
  // not listed yet (the tree stays connected), while they fit in max_nodes (the best's line always goes in).
  std::map<uint64_t, NodeRecord> shown;
  const bool all = digest.all() && static_cast<size_t>(digest.total()) <= max_nodes;
  if (!all) {
    const size_t part = tree_part(max_nodes);
    auto add_line = [&](uint64_t id, bool always) {
      std::vector<NodeRecord> line;  // id and its ancestors up to the first one listed
      for (uint64_t a = id; a && !shown.count(a);) {
        if (!always && shown.size() + line.size() >= max_nodes) return;  // does not fit: left out
        auto n = lookup(a);
        if (!n) break;
        a = n->parents.empty() ? 0 : n->parents.front();
        line.push_back(std::move(*n));
      }
      for (auto& n : line) shown.emplace(n.id, std::move(n));
    };
    add_line(best, true);
    const auto fit = digest.fittest();
    for (size_t i = 0; i < fit.size() && i < part; ++i) add_line(fit[i], false);
    const auto last = digest.latest();
    for (size_t i = last.size(), k = 0; i > 0 && k < 2 * part; --i, ++k) add_line(last[i - 1], false);
  }
  o << ",\"nodes_total\":" << digest.total() << ",\"nodes_shown\":" << (all ? digest.all()->size() : shown.size())
    << ",\"nodes\":[";
  bool first = true;
  auto list = [&](const NodeRecord& n) {
    o << (first ? "" : ",") << "{" << node_fields(n) << "}";
    first = false;
  };
  if (all)
    for (auto& n : *digest.all()) list(n);
  else
    for (auto& [id, n] : shown) list(n);
  o << "]}";
  return o.str();
}

std::string search_tree_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes, const SearchStatus* live,
                             uint64_t best, size_t max_nodes, Store* store) {
  return search_tree_json(record, digest_of(nodes, tree_limits(max_nodes)), memory_lookup(nodes), live, best, max_nodes,
                          store);
}

std::string node_detail_json(Store& store, const std::string& search, const NodeRecord& node, size_t max_artifact) {
  const NodeRecord* n = &node;
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
