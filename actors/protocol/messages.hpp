// Message structs that travel between actors (and, later, between nodes of a cluster). Records from
// runtime/ and storage/ are reused as they are; what is here only bundles them per request.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runtime/core/status.hpp"
#include "runtime/records/kb_query.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"
#include "runtime/records/node.hpp"
#include "runtime/records/node_context.hpp"
#include "runtime/search/strategy.hpp"
#include "runtime/records/store_batch.hpp"
#include "runtime/records/device_info.hpp"
#include "runtime/records/eval_job.hpp"
#include "runtime/records/search_status.hpp"

namespace kevolve {

// The answer to a request that acts (a console's submit, pause, resume, cancel): success with what was
// done, in words, or a Status saying why nothing was.
struct ActionReply {
  Status status;
  std::string said;  // on success: what was done ("started search ...", "search s1 paused: ...")

  static ActionReply done(std::string said) { return {Status::success(), std::move(said)}; }
  static ActionReply refused(Status why) { return {std::move(why), {}}; }
  static ActionReply refused(Errc code, std::string why) { return {Status::failure(code, std::move(why)), {}}; }
  // The line a console shows: what was done, or "error: why".
  std::string line() const { return status.ok() ? said : "error: " + status.message; }
};

// search -> operator: make one child.
struct MakeRequest {
  std::string search;
  Proposal proposal;
  std::vector<NodeRecord> parents;
  std::vector<NodeRecord> known;  // nodes created since the previous request of this search (so the
                                  // operator can avoid re-proposing a kernel the search already has)
  uint64_t seed = 0;              // the operator's randomness for this child, drawn from the search's RNG
  // For operators that need context (LLM), else empty (OperatorContext): the parents' contexts in the
  // proposal's parent order, the best k kernels (best first, their sources), the device of the latest verdict.
  std::vector<NodeContext> parent_contexts;
  std::vector<NodeContext> best;
  EvaluatingDevice device;
};

// operator -> search.
struct MakeReply {
  Status status;  // success: params and candidate are set; else why the operator made nothing
  Params params;
  Candidate candidate;
  std::string prompt, reply;  // stored with the node when the operator talks to an LLM
  std::string stop;           // set when the operator will make nothing more (e.g. its budget is spent)
};

// search -> context memory: one scored node and what the evaluator said about it.
struct ScoredNote {
  std::string search;
  NodeRecord node;
  std::string report;    // the verdict message (with the profile), or the compile log for compile errors
  double peak_gbps = 0;  // the device's measured copy bandwidth, when the backend measures one
};

// node -> build farm: compile one candidate for a backend.
struct BuildJob {
  std::string backend;  // cpu | null
  Candidate candidate;
  EvalOptions options;
};

}  // namespace kevolve
