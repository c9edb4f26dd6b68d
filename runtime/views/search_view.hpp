// A search as the dashboard and the report draw it, in JSON, from the store (and the live status when the
// search runs on this node). Pure C++ over the store: the console's `searches --json`, `tree SEARCH --json`
// and `node SEARCH NODE --json` answer with these, and report.html embeds the same from a stored search.
// A stored search is read in one pass into a SearchDigest (runtime/search/search_digest.hpp) and the nodes
// a view lists are read by id: memory follows what is shown, not the search's length.
//
//   summary : id, problem, strategy, backend, device class, state, counts, best, rate, budget, ETA
//   tree    : the summary + its nodes (id, parents, op, status, fitness; all, or up to a cap the notable
//             ones with their ancestors), the best-so-far curve, the failure mix over the evaluations,
//             the baselines (reference 1x, the seed kernel)
//   node    : one node's record and artifacts (source and its parent's, report, timings, diagnosis,
//             profile, prompt and reply)
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/records/device_info.hpp"
#include "runtime/records/search_status.hpp"
#include "runtime/search/search_digest.hpp"
#include "storage/store.hpp"

namespace kevolve::cluster {

// A node by id (from the store, or from nodes in memory); nullopt when there is none.
using NodeLookup = std::function<std::optional<NodeRecord>(uint64_t)>;
NodeLookup store_lookup(Store& store, const std::string& search);
NodeLookup memory_lookup(const std::vector<NodeRecord>& nodes);  // holds its own index of the nodes

// The limits a digest needs for search_tree_json(..., max_nodes) (the notable nodes of a capped tree).
DigestLimits tree_limits(size_t max_nodes);
// The digest of a stored search in one pass over its nodes (memory bounded by `limits`, not by the nodes).
// Fails (Errc::corrupt / io, naming what) when a node could not be read: a view never passes a partial scan
// off as the search.
Expected<SearchDigest> read_digest(Store& store, const std::string& search, DigestLimits limits);

// One search's summary as a JSON object. `live`: its status when it runs on this node (else null). With the
// `store`, "best_vs_compile" is the best node's speedup over torch.compile where its backend measured one
// (the Python interpreter), else null.
std::string search_summary_json(const SearchRecord& record, const SearchDigest& digest, const SearchStatus* live,
                                Store* store = nullptr);

// The summary with the nodes, the curve, the failure mix and the baselines. `best` overrides the node the
// view rings and names as best (0: the highest search-time fitness), e.g. the report's re-timed best.
// `max_nodes` caps the nodes listed (the curve, the mix and the counts still cover all of them): beyond it,
// notable_nodes() with their ancestors, and "nodes_total" / "nodes_shown" say so. The digest must have been
// made with tree_limits(max_nodes) or wider; `lookup` finds the ancestors.
std::string search_tree_json(const SearchRecord& record, const SearchDigest& digest, const NodeLookup& lookup,
                             const SearchStatus* live, uint64_t best = 0, size_t max_nodes = SIZE_MAX,
                             Store* store = nullptr);
// The same over nodes in memory (in id order).
std::string search_tree_json(const SearchRecord& record, const std::vector<NodeRecord>& nodes, const SearchStatus* live,
                             uint64_t best = 0, size_t max_nodes = SIZE_MAX, Store* store = nullptr);

// The speedup over torch.compile recorded with a node's timings ("timing" artifact); 0 when none was measured.
double compile_speedup_of(Store& store, const std::string& search, uint64_t node);

// The nodes worth showing of a large search: all of them up to `all_up_to` (when the digest kept them);
// beyond, the best's line of ancestors, the `fittest` fittest and the `latest` latest. (report.html embeds
// these nodes' details.)
std::set<uint64_t> notable_nodes(const SearchDigest& digest, const NodeLookup& lookup, uint64_t best,
                                 size_t all_up_to = 1500, size_t fittest = 300, size_t latest = 500);

// One node with its artifacts (each cut to `max_artifact` bytes).
std::string node_detail_json(Store& store, const std::string& search, const NodeRecord& node,
                             size_t max_artifact = 256 * 1024);

}  // namespace kevolve::cluster
