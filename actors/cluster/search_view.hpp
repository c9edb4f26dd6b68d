// A search as the dashboard and the report draw it, in JSON, from the store (and the live status when the
// search runs on this node). Pure C++ over the store: the console's `searches --json`, `tree SEARCH --json`
// and `node SEARCH NODE --json` answer with these, and report.html embeds the same from a stored search.
//
//   summary : id, problem, strategy, backend, device class, state, counts, best, rate, budget, ETA
//   tree    : the summary + every node (id, parents, op, status, fitness), the best-so-far curve, the
//             failure mix over the evaluations, the baselines (reference 1x, the seed kernel)
//   node    : one node's record and artifacts (source and its parent's, report, timings, diagnosis,
//             profile, prompt and reply)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <cstdint>
#include <set>

#include "actors/protocol/messages.hpp"
#include "runtime/search/graph.hpp"  // count_nodes
#include "storage/store.hpp"

namespace kevolve::cluster {

// One search's summary as a JSON object. `live`: its status when it runs on this node (else null). With the
// `store`, "best_vs_compile" is the best node's speedup over torch.compile where its backend measured one
// (the Python interpreter), else null.
std::string search_summary_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes,
                                const SearchStatus* live, Store* store = nullptr);

// The summary with the nodes, the curve, the failure mix and the baselines. `best` overrides the node the
// view rings and names as best (0: the highest search-time fitness), e.g. the report's re-timed best.
// `max_nodes` caps the nodes listed (the curve, the mix and the counts still cover all of them): beyond it,
// notable_nodes() with their ancestors, and "nodes_total" / "nodes_shown" say so.
std::string search_tree_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes, const SearchStatus* live,
                             uint64_t best = 0, size_t max_nodes = SIZE_MAX, Store* store = nullptr);

// The speedup over torch.compile recorded with a node's timings ("timing" artifact); 0 when none was measured.
double compile_speedup_of(Store& store, const std::string& search, uint64_t node);

// The nodes worth showing of a large search: all of them up to `all_up_to`; beyond, the best's line of
// ancestors, the `fittest` fittest and the `latest` latest. (report.html embeds these nodes' details.)
std::set<uint64_t> notable_nodes(const std::vector<NodeRecord>& nodes, uint64_t best, size_t all_up_to = 1500,
                                 size_t fittest = 300, size_t latest = 500);

// One node with its artifacts (each cut to `max_artifact` bytes); "" when the search has no such node.
std::string node_detail_json(Store& store, const std::string& search, const std::vector<NodeRecord>& nodes,
                             uint64_t node, size_t max_artifact = 256 * 1024);

// The highest search-time fitness among correct nodes (lowest id on ties); 0 when none is correct.
uint64_t best_node(const std::vector<NodeRecord>& nodes);

}  // namespace kevolve::cluster
