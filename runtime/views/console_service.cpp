#include "runtime/views/console_service.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

#include "runtime/views/search_view.hpp"
#include "runtime/core/json.hpp"
#include "runtime/search/device_classes.hpp"

namespace kevolve::cluster {
namespace {

using json::number;
using json::quote;

bool has_flag(const std::vector<std::string>& w, const std::string& f) {
  return std::find(w.begin(), w.end(), f) != w.end();
}

std::vector<std::string> positional(const std::vector<std::string>& w) {
  std::vector<std::string> p;
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] == "--depth" || w[i] == "--class" || w[i] == "--max-nodes") {
      ++i;
      continue;
    }
    if (w[i].rfind("--", 0) != 0) p.push_back(w[i]);
  }
  return p;
}

std::string fmt(double v, int digits = 3) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// The digest of a stored search (counts, best, per class; memory bounded by the limits, not by the nodes), or
// the console's error line naming what could not be read.
Expected<SearchDigest> digest(const ClusterView& v, const std::string& search, DigestLimits limits = {}) {
  auto d = read_digest(*v.store, search, limits);
  if (!d) return Expected<SearchDigest>::failure(d.status().code, "search '" + search + "': " + d.status().message);
  return d;
}

const SearchStatus* live_status(const ClusterView& v, const std::string& id) {
  for (auto& s : v.live)
    if (s.search == id) return &s;
  return nullptr;
}

// What a search's cached JSON was built from: its live counts, or its stored record's. Unchanged: still true.
std::string cache_state(const SearchRecord& r, const SearchStatus* live) {
  return live ? std::to_string(live->evaluated) + "/" + std::to_string(live->in_flight) + "/" +
                    std::to_string(live->finished) + "/" + std::to_string(live->paused)
              : "stored " + std::to_string(r.next_node) + "/" + std::to_string(r.finished);
}

// The JSON kept under `key` while it is younger than kTreeJsonMaxAge, or than kTreeJsonUnchangedAge when the
// search's state is what it was built from; else build() now, kept for the next request. Without a cache,
// build() every time.
std::string cached_json(const ClusterView& v, const std::string& key, const std::string& state,
                        const std::function<std::string()>& build) {
  const auto now = std::chrono::steady_clock::now();
  if (v.trees) {
    auto it = v.trees->by_search.find(key);
    if (it != v.trees->by_search.end() &&
        ((it->second.state == state && now - it->second.built < TreeCache::kTreeJsonUnchangedAge) ||
         now - it->second.built < TreeCache::kTreeJsonMaxAge))
      return it->second.json;
  }
  std::string json = build();
  if (v.trees) v.trees->by_search[key] = {json, state, now};
  return json;
}

std::string searches(const std::vector<std::string>& w, const ClusterView& v) {
  const bool js = has_flag(w, "--json");
  std::ostringstream o;
  if (js) o << "[";
  bool first = true;
  for (auto& r : v.store->searches()) {
    const SearchStatus* l = live_status(v, r.id);
    const std::string state = r.finished ? "finished" : l ? (l->paused ? "paused" : "running") : "stopped";
    if (js) {
      // Each open searches page asks this every 2 s: the summary (a read of every node) is cached as the tree is.
      const std::string summary = cached_json(v, "summary " + r.id, cache_state(r, l), [&] {
        auto d = digest(v, r.id);
        if (!d)  // the page shows the search and what could not be read, never counts from a partial read
          return "{\"id\":" + quote(r.id) + ",\"problem\":" + quote(r.problem) + ",\"strategy\":" + quote(r.strategy) +
                 ",\"state\":\"unreadable\",\"error\":" + quote(d.status().message) + "}";
        return search_summary_json(r, *d, l, v.store.get());
      });
      o << (first ? "" : ",") << summary;
    } else {
      auto d = digest(v, r.id);
      if (!d) {
        o << r.id << "  " << r.problem << "  error: " << d.status().message << "\n";
        first = false;
        continue;
      }
      const NodeCounts& c = d->counts();
      o << r.id << "  " << r.problem << "  " << state << "  evaluated " << c.evaluated << " (correct " << c.correct
        << ", failed " << c.failed << ")  in flight " << c.in_flight << "  best " << fmt(d->best_fitness())
        << "x (node " << d->best() << ")" << (l ? "  " + fmt(l->rate, 2) + "/s" : std::string()) << "\n";
    }
    first = false;
  }
  if (js)
    o << "]\n";
  else if (first)
    o << "no searches in this node's store\n";
  return o.str();
}

std::string show(const std::vector<std::string>& w, const ClusterView& v) {
  auto p = positional(w);
  if (p.size() != 1) return "error: usage: show SEARCH [--json]\n";
  auto r = v.store->search(p[0]);
  if (!r) return "error: no search '" + p[0] + "' in this node's store (see `searches`)\n";
  auto d = digest(v, p[0]);
  if (!d) return "error: " + d.status().message + " (see `kevolve store verify`)\n";
  const NodeCounts& c = d->counts();
  const auto& by_status = d->by_status();
  const auto classes = d->classes();
  std::ostringstream o;
  if (has_flag(w, "--json")) {
    o << "{\"id\":" << quote(r->id) << ",\"problem\":" << quote(r->problem) << ",\"strategy\":" << quote(r->strategy)
      << ",\"finished\":" << (r->finished ? "true" : "false") << ",\"stop_reason\":" << quote(r->stop_reason)
      << ",\"evaluated\":" << c.evaluated << ",\"correct\":" << c.correct << ",\"failed\":" << c.failed
      << ",\"in_flight\":" << c.in_flight << ",\"best_node\":" << d->best()
      << ",\"best_fitness\":" << number(d->best_fitness()) << ",\"by_status\":{";
    bool first = true;
    for (auto& [k, n] : by_status) {
      o << (first ? "" : ",") << quote(k) << ":" << n;
      first = false;
    }
    o << "},\"by_device_class\":[";
    first = true;
    for (auto& cs : classes) {
      o << (first ? "" : ",") << "{\"device_class\":" << quote(cs.device_class) << ",\"evaluated\":" << cs.evaluated
        << ",\"correct\":" << cs.correct << ",\"best_node\":" << cs.best
        << ",\"best_fitness\":" << number(cs.best_fitness) << ",\"best_ms\":" << number(cs.best_ms) << "}";
      first = false;
    }
    o << "]}\n";
    return o.str();
  }
  o << "search " << r->id << " on " << r->problem << " (" << r->strategy << ")"
    << (r->finished ? ", finished: " + r->stop_reason : "") << "\n"
    << "evaluated " << c.evaluated << ", correct " << c.correct << ", failed " << c.failed << ", in flight "
    << c.in_flight << "\n";
  for (auto& [k, n] : by_status) o << "  " << k << ": " << n << "\n";
  if (d->best()) o << "best: node " << d->best() << ", " << fmt(d->best_fitness()) << "x\n";
  if (!classes.empty()) o << "per device class (speedups measured on that class):\n";
  for (auto& cs : classes)
    o << "  " << cs.device_class << ": evaluated " << cs.evaluated << ", correct " << cs.correct
      << (cs.best ? ", best node " + std::to_string(cs.best) + " " + fmt(cs.best_fitness) + "x (" + fmt(cs.best_ms, 4) +
                        " ms)"
                  : std::string())
      << "\n";
  return o.str();
}

// The value of `--class TEXT` in the words ("" when absent).
std::string class_option(const std::vector<std::string>& w) {
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == "--class") return w[i + 1];
  return "";
}

std::string best(const std::vector<std::string>& w, const ClusterView& v) {
  auto p = positional(w);
  if (p.size() != 1) return "error: usage: best SEARCH [--class TEXT]\n";
  if (!v.store->search(p[0])) return "error: no search '" + p[0] + "' in this node's store (see `searches`)\n";
  auto d = digest(v, p[0]);
  if (!d) return "error: " + d.status().message + " (see `kevolve store verify`)\n";
  uint64_t best_id = d->best();
  const auto classes = d->classes();
  std::ostringstream o;
  // Speedups of two device classes are not comparable: with more than one, list each class's best, and
  // show the one of the class asked for (--class), else of the overall best's class.
  if (classes.size() > 1)
    for (auto& cs : classes)
      o << "best on " << cs.device_class << ": "
        << (cs.best ? "node " + std::to_string(cs.best) + ", " + fmt(cs.best_fitness) + "x"
                    : std::string("no correct kernel"))
        << " (" << cs.correct << " of " << cs.evaluated << " correct)\n";
  if (const std::string want = class_option(w); !want.empty()) {
    const ClassScore* cs = find_class(classes, want);
    if (!cs) return "error: no device class of search " + p[0] + " contains '" + want + "' (see `show " + p[0] + "`)\n";
    best_id = cs->best;
  }
  if (!best_id) return o.str() + "search " + p[0] + " has no correct kernel yet\n";
  if (auto found = v.store->node(p[0], best_id)) {
    const NodeRecord& n = *found;
    o << "best of " << p[0] << ": node " << n.id << ", " << fmt(n.fitness) << "x (candidate " << fmt(n.candidate_ms, 4)
      << " ms vs reference " << fmt(n.reference_ms, 4) << " ms"
      << (n.device_class.empty() ? "" : ", on " + n.device_class) << ")\n"
      << n.message << "\n";
  }
  if (auto src = v.store->artifact(p[0], best_id, "source")) o << "===== source =====\n" << *src << "\n";
  return o.str();
}

std::string node(const std::vector<std::string>& w, const ClusterView& v) {
  auto p = positional(w);
  uint64_t id = 0;
  if (p.size() != 2 || std::sscanf(p[1].c_str(), "%lu", &id) != 1) return "error: usage: node SEARCH NODE\n";
  if (has_flag(w, "--json")) {
    auto n = v.store->node(p[0], id);
    if (!n)
      return n.status().code == Errc::not_found ? "error: search '" + p[0] + "' has no node " + p[1] + "\n"
                                                : "error: " + n.status().message + "\n";
    return node_detail_json(*v.store, p[0], *n) + "\n";
  }
  if (auto found = v.store->node(p[0], id)) {
    const NodeRecord& n = *found;
    std::ostringstream o;
    o << "node " << n.id << " of " << p[0] << ": " << n.op << ", state " << (n.scored() ? "scored" : "in flight");
    if (n.scored())
      o << ", status " << status_name(n.status) << (n.reason.empty() ? "" : " [" + n.reason + "]") << ", fitness "
        << fmt(n.fitness);
    if (!n.device_class.empty()) o << " on " << n.device_class;
    o << "\n";
    if (!n.message.empty()) o << "message: " << n.message << "\n";
    for (const char* kind :
         {"prompt", "reply", "source", "report", "diagnosis", "compile_log", "runner_log", "placement"})
      if (auto a = v.store->artifact(p[0], n.id, kind); a && !a->empty())
        o << "===== " << kind << " =====\n" << *a << "\n";
    return o.str();
  }
  return "error: search '" + p[0] + "' has no node " + p[1] + "\n";
}

std::string tree(const std::vector<std::string>& w, const ClusterView& v) {
  auto p = positional(w);
  if (p.size() != 1) return "error: usage: tree SEARCH [--depth N] [--json [--max-nodes N]]\n";
  int depth = 1 << 20;
  size_t max_nodes = SIZE_MAX;
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "--depth" && std::sscanf(w[i + 1].c_str(), "%d", &depth) != 1) return "error: --depth takes a number\n";
    if (w[i] == "--max-nodes" && (std::sscanf(w[i + 1].c_str(), "%zu", &max_nodes) != 1 || max_nodes < 1))
      return "error: --max-nodes takes a positive number\n";
  }
  if (has_flag(w, "--json")) {
    auto r = v.store->search(p[0]);
    if (!r) return "error: no search '" + p[0] + "' in this node's store (see `searches`)\n";
    const SearchStatus* live = live_status(v, p[0]);
    return cached_json(v, p[0] + " " + std::to_string(max_nodes), cache_state(*r, live), [&] {
      auto d = digest(v, p[0], tree_limits(max_nodes));
      if (!d) return "error: " + d.status().message + "\n";
      return search_tree_json(*r, *d, store_lookup(*v.store, p[0]), live, 0, max_nodes, v.store.get()) + "\n";
    });
  }
  const auto nodes = v.store->nodes(p[0]);
  if (nodes.empty()) return "error: search '" + p[0] + "' has no nodes (see `searches`)\n";
  std::map<uint64_t, std::vector<const NodeRecord*>> children;
  std::vector<const NodeRecord*> roots;
  for (auto& n : nodes) (n.parents.empty() ? roots : children[n.parents.front()]).push_back(&n);
  std::ostringstream o;
  std::function<void(const NodeRecord*, int)> walk = [&](const NodeRecord* n, int d) {
    o << std::string(static_cast<size_t>(2 * d), ' ') << n->id << " " << n->op << " "
      << (n->scored() ? std::string(status_name(n->status)) + " " + fmt(n->fitness) + "x" : "in flight") << "\n";
    if (d + 1 >= depth) return;
    for (auto* c : children[n->id]) walk(c, d + 1);
  };
  for (auto* r : roots) walk(r, 0);
  return o.str();
}

std::string devices(const std::vector<std::string>& w, const ClusterView& v) {
  std::ostringstream o;
  const bool js = has_flag(w, "--json");
  if (js) o << "[";
  for (size_t i = 0; i < v.devices.size(); ++i) {
    auto& d = v.devices[i];
    const double util = d.joined_s > 0 ? d.busy_s / d.joined_s : 0;
    if (js) {
      o << (i ? "," : "") << "{\"host\":" << quote(d.info.host) << ",\"pid\":" << d.info.pid
        << ",\"index\":" << d.info.index << ",\"backend\":" << quote(d.info.backend)
        << ",\"name\":" << quote(d.info.name) << ",\"arch\":" << quote(d.info.arch)
        << ",\"device_class\":" << quote(d.info.device_class) << ",\"memory_bytes\":" << d.info.memory_bytes
        << ",\"copy_gbps\":" << number(d.info.copy_gbps) << ",\"fingerprint\":" << quote(d.info.fingerprint)
        << ",\"alive\":" << (d.alive ? "true" : "false") << ",\"busy\":" << (d.busy ? "true" : "false")
        << ",\"current\":" << quote(d.current) << ",\"evaluated\":" << d.evaluated
        << ",\"utilisation\":" << number(util) << "}";
    } else {
      o << d.info.host << ":" << d.info.pid << "/" << d.info.index << "  " << d.info.backend << "  " << d.info.name
        << "  "
        << (d.info.memory_bytes > 0 ? fmt(static_cast<double>(d.info.memory_bytes) / (1 << 30), 1) + " GiB  "
                                    : std::string())
        << (d.info.copy_gbps > 0 ? "copy " + fmt(d.info.copy_gbps, 1) + " GB/s  "
                                 : std::string("copy not measured yet  "))
        << (d.alive ? (d.busy ? "busy (" + d.current + ")" : "idle") : "gone") << "  evaluated " << d.evaluated
        << "  busy " << fmt(100 * util, 1) << " %\n";
    }
  }
  if (js)
    o << "]\n";
  else if (v.devices.empty())
    o << "no devices have joined (start one: kevolve evaluator --join HOST:PORT)\n";
  return o.str();
}

std::string stats(const std::vector<std::string>& w, const ClusterView& v) {
  double busy = 0, busy_q = 0, queued = 0;
  int alive = 0;
  for (auto& d : v.devices) {
    busy += d.busy_s;
    busy_q += d.busy_while_queued_s;
    queued += d.queued_s;
    alive += d.alive;
  }
  double rate = 0;
  for (auto& s : v.live) rate += s.rate;
  const double util_q = queued > 0 ? busy_q / queued : 0;
  std::ostringstream o;
  if (has_flag(w, "--json")) {
    o << "{\"uptime_s\":" << number(v.uptime_s) << ",\"rate\":" << number(rate) << ",\"queued\":" << v.queued
      << ",\"dispatched\":" << v.dispatched << ",\"requeued\":" << v.requeued << ",\"devices\":" << v.devices.size()
      << ",\"devices_alive\":" << alive << ",\"utilisation_while_queued\":" << number(util_q) << "}\n";
    return o.str();
  }
  o << "uptime " << fmt(v.uptime_s, 1) << " s, " << fmt(rate, 2) << " evaluations/s, queue depth " << v.queued
    << ", dispatched " << v.dispatched << ", re-queued " << v.requeued << "\n"
    << "devices: " << alive << " alive of " << v.devices.size() << "; busy " << fmt(100 * util_q, 1)
    << " % of the device time during which candidates were waiting\n";
  return o.str();
}

}  // namespace

const std::vector<std::string>& console_commands() {
  static const std::vector<std::string> c{"help",    "searches", "show",  "best",   "node",   "tree",
                                          "devices", "stats",    "pause", "resume", "cancel", "submit"};
  return c;
}

std::string console_command(const std::vector<std::string>& w, const ClusterView& v) {
  if (w.empty() || w[0] == "help")
    return "searches [--json]            every search in this node's store, with live rates\n"
           "show SEARCH [--json]         one search: counts by status, best node, counts and best per device class\n"
           "best SEARCH [--class TEXT]   the best kernel's figures and source (with several device classes: each\n"
           "                             class's best, and the source of the best on the class containing TEXT)\n"
           "node SEARCH NODE [--json]    one node: status, message, prompt, source, reports, diagnosis (JSON: with "
           "timings\n"
           "                             and its parent's source)\n"
           "tree SEARCH [--depth N]      the search tree (--json: every node, the best-so-far curve, the failure mix;\n"
           "                             --max-nodes N: at most about N nodes, the notable ones and their ancestors)\n"
           "devices [--json]             the evaluators' devices: backend, state, evaluations, utilisation\n"
           "stats [--json]               rates, queue depth, re-queues, utilisation while work waits\n"
           "pause SEARCH                 propose nothing new (candidates in flight finish)\n"
           "resume SEARCH                carry on proposing\n"
           "cancel SEARCH                stop the search for good (recorded as finished)\n"
           "submit CONFIG                start another search on this node (a config file on the node's machine; same "
           "backend,\n"
           "                             the node's store, farm and devices)\n";
  if (w[0] == "searches") return searches(w, v);
  if (w[0] == "show") return show(w, v);
  if (w[0] == "best") return best(w, v);
  if (w[0] == "node") return node(w, v);
  if (w[0] == "tree") return tree(w, v);
  if (w[0] == "devices") return devices(w, v);
  if (w[0] == "stats") return stats(w, v);
  if (w[0] == "pause" || w[0] == "resume" || w[0] == "cancel" || w[0] == "submit")
    return "error: '" + w[0] + "' needs the running node (ask it through the console)\n";
  return "error: unknown command '" + w[0] + "' (try `help`)\n";
}

}  // namespace kevolve::cluster
