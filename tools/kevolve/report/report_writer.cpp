#include "runtime/records/backend_kind.hpp"
#include "tools/kevolve/report/report_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "runtime/views/search_view.hpp"
#include "runtime/dashboard/dashboard_page.hpp"
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

// The nodes report.html's tree lists at most: beyond, the notable ones and their ancestors (the curve, the
// failure mix and the counts still cover every node). A page of a million nodes could not be drawn anyway.
constexpr size_t kReportTreeNodes = 20000;

// The search as the store has it (opened read-only: a running search may hold it) and the digest of its
// nodes: one pass, memory bounded by the tree's cap and the re-timed few, not by the search's length.
struct StoredSearch {
  std::unique_ptr<Store> store;
  SearchRecord record;
  SearchDigest digest;
};

// The data of report.html's search view: the same JSON the dashboard's API gives (runtime/views/search_view),
// with `best` (the node the text names) as the ringed best, the details of the notable nodes, and the top ten.
std::string view_data(const StoredSearch& s, uint64_t best) {
  const auto lookup = cluster::store_lookup(*s.store, s.record.id);
  std::ostringstream o;
  o << "{\"search\":"
    << cluster::search_tree_json(s.record, s.digest, lookup, nullptr, best, kReportTreeNodes, s.store.get())
    << ",\"nodes\":{";
  bool first = true;
  for (uint64_t id : cluster::notable_nodes(s.digest, lookup, best)) {
    auto n = lookup(id);
    if (!n) continue;
    o << (first ? "" : ",") << "\"" << id << "\":" << cluster::node_detail_json(*s.store, s.record.id, *n, 64 * 1024);
    first = false;
  }
  const auto top = s.digest.top();
  o << "},\"top\":[";
  for (size_t i = 0; i < top.size() && i < 10; ++i)
    o << (i ? "," : "") << "{\"node\":" << top[i].id << ",\"speedup\":" << json::number(top[i].fitness)
      << ",\"candidate_ms\":" << json::number(top[i].candidate_ms)
      << ",\"device_class\":" << json::quote(top[i].device_class) << "}";
  o << "]}";
  return o.str();
}

Expected<StoredSearch> read_search(const ReportRequest& q) {
  using R = Expected<StoredSearch>;
  auto opened = Store::open(q.store, /*read_only=*/true);
  if (!opened) return R::failure(opened.status());
  auto rec = (*opened)->search(q.search_id);
  if (!rec) return R::failure(rec.status());
  DigestLimits limits = cluster::tree_limits(kReportTreeNodes);
  limits.top_records = static_cast<size_t>(std::max(10, q.retime_top));
  auto digest = cluster::read_digest(**opened, q.search_id, limits);
  if (!digest) return R::failure(digest.status().code, "store " + q.store + ": " + digest.status().message);
  return StoredSearch{std::move(*opened), *rec, std::move(*digest)};
}

// Counts of scored nodes, in total and per status name.
ReportSummary summarize(const SearchDigest& d) {
  ReportSummary sum;
  sum.evaluated = d.counts().evaluated;
  sum.correct = d.counts().correct;
  sum.failed = d.counts().failed;
  return sum;
}

struct Retimed {
  NodeRecord node;
  EvalResult result;
};

// The best node: the highest speedup among the top `retime_top` correct nodes re-timed in a fresh
// evaluator worker (their search-time fitness decides only when nothing could be re-timed).
struct BestPick {
  std::optional<NodeRecord> node;
  EvalResult eval;  // its re-timing, when there was one and it was ok
  std::vector<Retimed> retimed;
  bool retimed_ok() const { return eval.status == EvalStatus::ok && eval.speedup > 0; }
};

BestPick pick_best(const ReportRequest& q, StoredSearch& s) {
  std::vector<NodeRecord> top = s.digest.top();
  if (top.size() > static_cast<size_t>(std::max(1, q.retime_top)))
    top.resize(static_cast<size_t>(std::max(1, q.retime_top)));
  BestPick pick;
  if (!top.empty()) pick.node = top.front();
  if (!backend_traits(q.backend).evaluates || q.retime_top <= 0 || top.empty()) return pick;
  auto fresh = make_backend(q.backend);
  double best_retimed = -1;
  size_t k = 0;
  for (auto& node : top) {
    const NodeRecord* n = &node;
    ++k;
    auto src = s.store->artifact(q.search_id, n->id, "source");
    if (!src) continue;
    Candidate c;
    c.source = *src;
    c.entry = q.spec.entry;
    c.language = candidate_language(q.backend);
    const auto t0 = std::chrono::steady_clock::now();
    EvalResult r = fresh->evaluate_source(q.spec, c, q.retime);
    // Each re-timing is shown as it ends: a newcomer's first run waits on these.
    char line[320];
    int len = std::snprintf(line, sizeof line, "kevolve: re-timed node %llu (%zu of %zu) in %.1f s: ",
                            static_cast<unsigned long long>(n->id), k, top.size(),
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (len > 0 && static_cast<size_t>(len) < sizeof line) {
      if (r.status == EvalStatus::ok)
        std::snprintf(line + len, sizeof line - len,
                      "%.3fx (%.4f ms against the reference's %.4f ms; %.3fx in the search)", r.speedup,
                      r.candidate.median_ms, r.reference.median_ms, n->fitness);
      else
        std::snprintf(line + len, sizeof line - len, "%s", status_name(r.status));
    }
    std::cerr << line << "\n";
    pick.retimed.push_back({*n, r});
    if (r.status == EvalStatus::ok && r.speedup > best_retimed) {
      best_retimed = r.speedup;
      pick.node = *n;
      pick.eval = r;
    }
  }
  if (best_retimed < 0) pick.eval = EvalResult{};
  return pick;
}

std::string retimed_json(const BestPick& pick) {
  std::ostringstream js;
  js << "[";
  for (size_t i = 0; i < pick.retimed.size(); ++i) {
    const auto& [n, r] = pick.retimed[i];
    js << (i ? "," : "") << "{\"node_id\":" << n.id << ",\"status\":" << json::quote(status_name(r.status))
       << ",\"search_speedup\":" << json::number(n.fitness) << ",\"speedup\":" << json::number(r.speedup)
       << ",\"candidate_ms\":" << json::number(r.candidate.median_ms)
       << ",\"reference_ms\":" << json::number(r.reference.median_ms) << "}";
  }
  js << "]";
  return js.str();
}

std::string best_json(const BestPick& pick, const ReportSummary& sum) {
  if (!pick.node) return "null";
  const NodeRecord* best = &*pick.node;
  const EvalResult& e = pick.eval;
  const bool ok = pick.retimed_ok();
  std::ostringstream js;
  js << "{\"node_id\":" << best->id << ",\"status\":" << json::quote(status_name(best->status))
     << ",\"speedup\":" << json::number(sum.best_speedup) << ",\"search_speedup\":" << json::number(best->fitness)
     << ",\"retimed\":" << (ok ? "true" : "false")
     << ",\"candidate_ms\":" << json::number(ok ? e.candidate.median_ms : best->candidate_ms)
     << ",\"reference_ms\":" << json::number(ok ? e.reference.median_ms : best->reference_ms)
     << ",\"candidate_p10_ms\":" << json::number(e.candidate.p10_ms)
     << ",\"candidate_p90_ms\":" << json::number(e.candidate.p90_ms) << ",\"gbps\":" << json::number(e.candidate_gbps)
     << ",\"peak_gbps\":" << json::number(e.peak_gbps) << ",\"device\":" << json::quote(e.device)
     << ",\"device_class\":" << json::quote(best->device_class) << ",\"threads\":" << e.candidate.threads
     << ",\"params\":" << params_json(best->params) << "}";
  return js.str();
}

std::string classes_json(const SearchDigest& d) {
  std::ostringstream js;
  js << "[";
  bool first = true;
  for (auto& cs : d.classes()) {
    js << (first ? "" : ",") << "{\"device_class\":" << json::quote(cs.device_class)
       << ",\"evaluated\":" << cs.evaluated << ",\"correct\":" << cs.correct << ",\"best_node\":" << cs.best
       << ",\"best_speedup\":" << json::number(cs.best_fitness) << ",\"best_ms\":" << json::number(cs.best_ms) << "}";
    first = false;
  }
  js << "]";
  return js.str();
}

// report.json: the search, its best kernel, counts, the re-timings, fitness per device class, the method.
std::string report_json(const ReportRequest& q, const StoredSearch& s, const ReportSummary& sum, const BestPick& pick,
                        const std::string& nsight) {
  const SearchRecord& rec = s.record;
  std::ostringstream js;
  js << "{\"search_id\":" << json::quote(q.search_id) << ",\"problem\":" << json::quote(rec.problem)
     << ",\"strategy\":" << json::quote(rec.strategy) << ",\"finished\":" << (rec.finished ? "true" : "false")
     << ",\"stop_reason\":" << json::quote(rec.stop_reason) << ",\"best\":" << best_json(pick, sum);
  js << ",\"counts\":{\"evaluated\":" << sum.evaluated << ",\"correct\":" << sum.correct << ",\"failed\":" << sum.failed
     << ",\"by_status\":{";
  bool first = true;
  for (auto& [k, v] : s.digest.by_status()) {
    js << (first ? "" : ",") << json::quote(k) << ":" << v;
    first = false;
  }
  js << "}},\"retimed\":" << retimed_json(pick) << ",\"device_classes\":" << classes_json(s.digest);
  if (!nsight.empty()) js << ",\"nsight\":" << json::quote(nsight);
  js << ",\"method\":"
     << json::quote(backend_traits(q.backend).evaluates
                        ? "best = highest speedup among the top " + std::to_string(q.retime_top) +
                              " search-time candidates re-timed in a fresh evaluator worker (alternating "
                              "candidate and reference passes, median)"
                        : "null backend: synthetic fitness, nothing re-timed")
     << "}\n";
  return js.str();
}

// Writes the whole file or says which one could not be written.
Status write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::failure(Errc::io, "cannot write " + path.string());
  return Status::success();
}

std::string best_source_name(const std::string& backend) {
  if (backend == "cuda") return "kernel.cu";
  if (backend.rfind("python", 0) == 0) return "model_new.py";
  return "kernel.cpp";
}

}  // namespace

Expected<ReportSummary> write_report(const ReportRequest& q) {
  using R = Expected<ReportSummary>;
  auto read = read_search(q);
  if (!read) return R::failure(read.status());
  StoredSearch& s = *read;
  ReportSummary sum = summarize(s.digest);
  const BestPick pick = pick_best(q, s);
  if (pick.node) {
    sum.best_node = pick.node->id;
    sum.search_speedup = pick.node->fitness;
    sum.best_speedup = pick.retimed_ok() ? pick.eval.speedup : pick.node->fitness;
  }
  // Hardware counters for the best CUDA kernel (Nsight Compute replays the kernel: seconds).
  std::string nsight;
  if (q.backend == "cuda" && q.nsight && pick.retimed_ok())
    if (auto src = s.store->artifact(q.search_id, pick.node->id, "source"))
      nsight = cuda::nsight_profile(q.spec, *src, q.retime, sibling_executable("kevolve"));

  std::error_code ec;
  const fs::path out(q.out_dir);
  fs::create_directories(out / "best", ec);
  if (ec) return R::failure(Errc::io, "cannot create " + (out / "best").string() + ": " + ec.message());
  std::vector<std::pair<fs::path, std::string>> files;
  files.push_back({out / "report.json", report_json(q, s, sum, pick, nsight)});
  if (pick.node) {
    if (auto src = s.store->artifact(q.search_id, pick.node->id, "source"))
      files.push_back({out / "best" / best_source_name(q.backend), *src});
    files.push_back({out / "best" / "params.json", params_json(pick.node->params) + "\n"});
    if (!nsight.empty()) files.push_back({out / "best" / "nsight.txt", nsight});
  }
  const SearchRecord& rec = s.record;
  std::ostringstream text;
  text << "search " << q.search_id << " on " << rec.problem << " (" << rec.strategy << "): " << sum.evaluated
       << " evaluated, " << sum.correct << " correct, " << sum.failed << " failed; "
       << (rec.finished ? "finished: " + rec.stop_reason : "still running") << "\n";
  if (pick.node)
    text << "best: node " << pick.node->id << ", " << sum.best_speedup << "x over libtorch"
         << (pick.retimed_ok() ? " (re-timed)" : "") << "\n";
  files.push_back({out / "report.html",
                   dashboard::report_page("kevolve: " + q.search_id, text.str(), view_data(s, sum.best_node))});
  for (auto& [path, content] : files)
    if (auto ok = write_file(path, content); !ok) return R::failure(ok);
  return sum;
}

}  // namespace kevolve
