#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/report/report_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/backend.hpp"
#include "backends/cuda/profile/nsight.hpp"
#include "backends/worker_client.hpp"
#include "runtime/core/json.hpp"
#include "runtime/search/device_classes.hpp"
#include "runtime/search/graph.hpp"
#include "storage/store.hpp"

namespace kevolve {
namespace fs = std::filesystem;

namespace {

std::string params_json(const Params& p) {
  std::string s = "{";
  for (auto& [k, v] : p) s += (s.size() > 1 ? "," : "") + json::quote(k) + ":" + json::quote(v);
  return s + "}";
}

std::string escape_html(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

const char* status_colour(const NodeRecord& n) {
  if (!n.scored()) return "#bbbbbb";
  switch (n.status) {
    case EvalStatus::ok:
      return "#2e7d32";
    case EvalStatus::compile_error:
      return "#ef6c00";
    case EvalStatus::incorrect:
      return "#c62828";
    case EvalStatus::rejected:
      return "#6a1b9a";
    default:
      return "#5d4037";
  }
}

// The tree (x = depth, y = order of appearance within the depth) and the best-so-far curve, as SVG.
std::string html(const std::string& title, const SearchGraph& g, const std::string& summary) {
  std::map<uint64_t, int> depth;
  std::map<int, int> row_count;
  std::map<uint64_t, std::pair<double, double>> pos;
  for (auto& [id, n] : g.nodes()) {
    const int d = n.parents.empty() ? 0 : depth[n.parents[0]] + 1;
    depth[id] = d;
    pos[id] = {40.0 + d * 90.0, 30.0 + row_count[d]++ * 18.0};
  }
  int rows = 1, max_depth = 0;
  for (auto& [d, c] : row_count) {
    rows = std::max(rows, c);
    max_depth = std::max(max_depth, d);
  }
  const double w = 80 + max_depth * 90.0 + 60, h = 40 + rows * 18.0;
  std::ostringstream t;
  t << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h << "'>";
  for (auto& [id, n] : g.nodes())
    for (auto p : n.parents)
      if (pos.count(p))
        t << "<line x1='" << pos[p].first << "' y1='" << pos[p].second << "' x2='" << pos[id].first << "' y2='"
          << pos[id].second << "' stroke='" << (n.op == "crossover" ? "#1565c0" : "#999") << "' stroke-width='1'/>";
  const auto best = g.best();
  for (auto& [id, n] : g.nodes()) {
    std::ostringstream tip;
    tip << "node " << id << " (" << n.op << ") " << status_name(n.status) << " fitness " << n.fitness << "\n";
    for (auto& [k, v] : n.params) tip << k << "=" << v << " ";
    const double r = 4 + std::min(8.0, n.fitness * 2);
    t << "<circle cx='" << pos[id].first << "' cy='" << pos[id].second << "' r='" << r << "' fill='" << status_colour(n)
      << "'" << (best && *best == id ? " stroke='#000' stroke-width='3'" : "") << "><title>" << escape_html(tip.str())
      << "</title></circle>";
  }
  t << "</svg>";

  // Best fitness over evaluations (in node id order, failures count as evaluations).
  std::vector<double> curve;
  double b = 0;
  for (auto& [id, n] : g.nodes())
    if (n.scored()) {
      b = std::max(b, n.correct() ? n.fitness : 0.0);
      curve.push_back(b);
    }
  const double cw = 640, ch = 240, top = std::max(1.0, b * 1.1);
  std::ostringstream c;
  c << "<svg xmlns='http://www.w3.org/2000/svg' width='" << cw + 60 << "' height='" << ch + 40 << "'>"
    << "<line x1='40' y1='" << ch + 10 << "' x2='" << cw + 40 << "' y2='" << ch + 10 << "' stroke='#444'/>"
    << "<line x1='40' y1='10' x2='40' y2='" << ch + 10 << "' stroke='#444'/>"
    << "<text x='2' y='16' font-size='11'>" << top << "x</text><text x='10' y='" << ch + 10
    << "' font-size='11'>0</text>"
    << "<text x='" << cw - 40 << "' y='" << ch + 34 << "' font-size='11'>evaluations: " << curve.size() << "</text>";
  const double one = 10 + ch - ch / top;
  c << "<line x1='40' y1='" << one << "' x2='" << cw + 40 << "' y2='" << one
    << "' stroke='#c62828' stroke-dasharray='4'/>"
    << "<text x='" << cw + 42 << "' y='" << one + 4
    << "' font-size='11'>1x</text><polyline fill='none' stroke='#2e7d32' stroke-width='2' points='";
  for (size_t i = 0; i < curve.size(); ++i)
    c << 40 + cw * (curve.size() > 1 ? double(i) / double(curve.size() - 1) : 0.0) << ","
      << 10 + ch - ch * curve[i] / top << " ";
  c << "'/></svg>";

  std::ostringstream o;
  o << "<!doctype html><html><head><meta charset='utf-8'><title>" << escape_html(title) << "</title>"
    << "<style>body{font-family:sans-serif;margin:24px} pre{background:#f5f5f5;padding:8px} "
       ".tree{overflow:auto;border:1px solid #ddd}</style>"
    << "</head><body><h1>" << escape_html(title) << "</h1><pre>" << escape_html(summary) << "</pre>"
    << "<h2>Best speedup over evaluations</h2>" << c.str()
    << "<h2>Search tree</h2><p>Left to right: depth. Green: correct; orange: compile error; red: incorrect; purple: "
       "rejected; "
       "brown: other failures; blue edges: crossover; black ring: best. Hover a node for its parameters.</p><div "
       "class='tree'>"
    << t.str() << "</div></body></html>\n";
  return o.str();
}

}  // namespace

Expected<ReportSummary> write_report(const ReportRequest& q) {
  using R = Expected<ReportSummary>;
  auto opened = Store::open(q.store, /*read_only=*/true);
  if (!opened) return R::failure(opened.error());
  auto& store = *opened;
  auto rec = store->search(q.search_id);
  if (!rec) return R::failure(rec.error());
  SearchGraph g;
  for (auto& n : store->nodes(q.search_id)) g.upsert(n);

  ReportSummary sum;
  std::map<std::string, int64_t> by_status;
  for (auto& [id, n] : g.nodes()) {
    if (!n.scored()) continue;
    ++sum.evaluated;
    ++by_status[status_name(n.status)];
    if (n.correct())
      ++sum.correct;
    else
      ++sum.failed;
  }

  // Re-time the top candidates in a fresh worker; the best re-timed one is the reported best.
  std::vector<const NodeRecord*> top;
  for (auto& [id, n] : g.nodes())
    if (n.correct()) top.push_back(&n);
  std::sort(top.begin(), top.end(),
            [](auto* a, auto* b) { return a->fitness != b->fitness ? a->fitness > b->fitness : a->id < b->id; });
  if (top.size() > static_cast<size_t>(std::max(1, q.retime_top)))
    top.resize(static_cast<size_t>(std::max(1, q.retime_top)));
  std::ostringstream retimed;
  retimed << "[";
  const NodeRecord* best = top.empty() ? nullptr : top.front();
  EvalResult best_eval;
  if (backend_traits(q.backend).evaluates && q.retime_top > 0 && !top.empty()) {
    auto fresh_backend = make_backend(q.backend);
    Backend& fresh = *fresh_backend;
    double best_retimed = -1;
    for (auto* n : top) {
      auto src = store->artifact(q.search_id, n->id, "source");
      if (!src) continue;
      Candidate c;
      c.source = *src;
      c.entry = q.spec.entry;
      c.language = candidate_language(q.backend);
      EvalResult r = fresh.evaluate_source(q.spec, c, q.retime);
      retimed << (retimed.tellp() > 1 ? "," : "") << "{\"node_id\":" << n->id
              << ",\"status\":" << json::quote(status_name(r.status))
              << ",\"search_speedup\":" << json::number(n->fitness) << ",\"speedup\":" << json::number(r.speedup)
              << ",\"candidate_ms\":" << json::number(r.candidate.median_ms)
              << ",\"reference_ms\":" << json::number(r.reference.median_ms) << "}";
      if (r.status == EvalStatus::ok && r.speedup > best_retimed) {
        best_retimed = r.speedup;
        best = n;
        best_eval = r;
      }
    }
    if (best_retimed < 0) best_eval = EvalResult{};
  }
  retimed << "]";
  if (best) {
    sum.best_node = best->id;
    sum.search_speedup = best->fitness;
    sum.best_speedup = best_eval.status == EvalStatus::ok && best_eval.speedup > 0 ? best_eval.speedup : best->fitness;
  }

  std::error_code ec;
  fs::create_directories(fs::path(q.out_dir) / "best", ec);
  if (ec) return R::failure("cannot create " + q.out_dir + ": " + ec.message());
  const bool retimed_ok = best_eval.status == EvalStatus::ok && best_eval.speedup > 0;
  std::ostringstream js;
  js << "{\"search_id\":" << json::quote(q.search_id) << ",\"problem\":" << json::quote(rec->problem)
     << ",\"strategy\":" << json::quote(rec->strategy) << ",\"finished\":" << (rec->finished ? "true" : "false")
     << ",\"stop_reason\":" << json::quote(rec->stop_reason) << ",\"best\":";
  if (best) {
    js << "{\"node_id\":" << best->id << ",\"status\":" << json::quote(status_name(best->status))
       << ",\"speedup\":" << json::number(sum.best_speedup) << ",\"search_speedup\":" << json::number(best->fitness)
       << ",\"retimed\":" << (retimed_ok ? "true" : "false")
       << ",\"candidate_ms\":" << json::number(retimed_ok ? best_eval.candidate.median_ms : best->candidate_ms)
       << ",\"reference_ms\":" << json::number(retimed_ok ? best_eval.reference.median_ms : best->reference_ms)
       << ",\"candidate_p10_ms\":" << json::number(best_eval.candidate.p10_ms)
       << ",\"candidate_p90_ms\":" << json::number(best_eval.candidate.p90_ms)
       << ",\"gbps\":" << json::number(best_eval.candidate_gbps)
       << ",\"peak_gbps\":" << json::number(best_eval.peak_gbps) << ",\"device\":" << json::quote(best_eval.device)
       << ",\"device_class\":" << json::quote(best->device_class) << ",\"threads\":" << best_eval.candidate.threads
       << ",\"params\":" << params_json(best->params) << "}";
  } else {
    js << "null";
  }
  js << ",\"counts\":{\"evaluated\":" << sum.evaluated << ",\"correct\":" << sum.correct << ",\"failed\":" << sum.failed
     << ",\"by_status\":{";
  bool first = true;
  for (auto& [k, v] : by_status) {
    js << (first ? "" : ",") << json::quote(k) << ":" << v;
    first = false;
  }
  // Hardware counters for the best CUDA kernel (Nsight Compute, when it can read them; KEVOLVE_NSIGHT=0
  // skips the profiling run, which replays the kernel and takes seconds).
  std::string nsight;
  const char* want_nsight = std::getenv("KEVOLVE_NSIGHT");
  if (q.backend == "cuda" && retimed_ok && !(want_nsight && std::string(want_nsight) == "0"))
    if (auto src = store->artifact(q.search_id, best->id, "source"))
      nsight = cuda::nsight_profile(q.spec, *src, q.retime, sibling_executable("kevolve"));
  js << "}},\"retimed\":" << retimed.str();
  // Fitness per device class: a search whose nodes ran on several classes has one best per class.
  js << ",\"device_classes\":[";
  first = true;
  for (auto& cs : scores_by_class(g.nodes())) {
    js << (first ? "" : ",") << "{\"device_class\":" << json::quote(cs.device_class)
       << ",\"evaluated\":" << cs.evaluated << ",\"correct\":" << cs.correct << ",\"best_node\":" << cs.best
       << ",\"best_speedup\":" << json::number(cs.best_fitness) << ",\"best_ms\":" << json::number(cs.best_ms) << "}";
    first = false;
  }
  js << "]";
  if (!nsight.empty()) js << ",\"nsight\":" << json::quote(nsight);
  js << ",\"method\":"
     << json::quote(backend_traits(q.backend).evaluates
                        ? "best = highest speedup among the top " + std::to_string(q.retime_top) +
                              " search-time candidates re-timed in a fresh evaluator worker (alternating "
                              "candidate and reference passes, median)"
                        : "null backend: synthetic fitness, nothing re-timed")
     << "}\n";
  std::ofstream(fs::path(q.out_dir) / "report.json") << js.str();
  if (best) {
    if (auto src = store->artifact(q.search_id, best->id, "source"))
      std::ofstream(fs::path(q.out_dir) / "best" /
                    (q.backend == "cuda"                 ? "kernel.cu"
                     : q.backend.rfind("python", 0) == 0 ? "model_new.py"
                                                         : "kernel.cpp"))
          << *src;
    std::ofstream(fs::path(q.out_dir) / "best" / "params.json") << params_json(best->params) << "\n";
    if (!nsight.empty()) std::ofstream(fs::path(q.out_dir) / "best" / "nsight.txt") << nsight;
  }
  std::ostringstream text;
  text << "search " << q.search_id << " on " << rec->problem << " (" << rec->strategy << "): " << sum.evaluated
       << " evaluated, " << sum.correct << " correct, " << sum.failed << " failed; "
       << (rec->finished ? "finished: " + rec->stop_reason : "still running") << "\n";
  if (best)
    text << "best: node " << best->id << ", " << sum.best_speedup << "x over libtorch"
         << (retimed_ok ? " (re-timed)" : "") << "\n";
  std::ofstream(fs::path(q.out_dir) / "report.html") << html("kevolve: " + q.search_id, g, text.str());
  return sum;
}

}  // namespace kevolve
