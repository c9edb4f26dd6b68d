// Operator: turns a strategy's proposal (an operation on parent nodes) into a new candidate kernel.
// Implementations: TemplateOperator (offline, knowledge-base templates); the LLM operator slots in here.
#pragma once
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "runtime/core/expected.hpp"
#include "runtime/memory/lessons.hpp"
#include "runtime/records/candidate.hpp"
#include "runtime/records/node_context.hpp"
#include "runtime/search/strategy.hpp"

namespace kevolve {

struct Offspring {
  Params params;              // what distinguishes this child (template parameters, or a content hash)
  Candidate candidate;        // real source code for the backend
  std::string prompt, reply;  // LLM operators: what was asked and answered (stored with the node)
};

// Context an operator may use (LLM operators do; the template operator needs only the parents' records).
// Operators that do not need context (needs_context() false) get no parents, best or device.
struct OperatorContext {
  std::vector<NodeContext> parents;  // in the proposal's parent order
  std::vector<NodeContext> best;     // the best correct kernels so far, best first ([llm] best_k of them)
  // What the deep-search agent found for this operator's knowledge_query(), when it was asked.
  std::vector<KbHit> knowledge;
  bool knowledge_given = false;
  EvaluatingDevice device;  // where the search's kernels are evaluated
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual std::string name() const = 0;
  // Builds the child of `p` (parents are nodes of `g`). An error means no new child could be made
  // (e.g. every neighbour already exists); the search then moves on.
  virtual Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) = 0;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng) {
    return make(p, g, rng, OperatorContext{});
  }
  // How many node records make() needs held in its graph beyond the parents sent with each request (0 = every
  // node, the default): an operator that reads only its parents and has_params() keeps a bounded window, so
  // that its copy of a search holds memory by the work in flight, not by the search's history.
  virtual size_t history_window() const { return 0; }
  // Whether make() needs sources and reports in its context (the search then keeps them at hand).
  virtual bool needs_context() const { return false; }
  // Whether make() blocks for long (network): the operator actor then gets a thread of its own.
  virtual bool blocks() const { return false; }
  // How many make() calls may run at once.
  virtual int concurrency() const { return 1; }
  // Why the operator will make nothing more (a spent budget); "" while it can go on.
  virtual std::string exhausted() const { return {}; }
  // Whether failed nodes can be given to this operator for repair.
  virtual bool can_repair() const = 0;
  // The knowledge base this operator draws on (the deep-search agent serves it); nullptr = none.
  virtual std::shared_ptr<KnowledgeBase> knowledge_base() const { return nullptr; }
  // The retrieval query for one child, built from the parent's context (empty text = no retrieval).
  // The operator actor asks the deep-search agent and hands the hits to make() in ctx.knowledge.
  virtual KbQuery knowledge_query(const Proposal&, const SearchGraph&, const OperatorContext&) const { return {}; }
  // What earlier searches on the same problem, backend and hardware learnt, given before a NEW search
  // starts; an operator may start from their best kernels. Returns how it used them ("" = not at all).
  virtual std::string warm_start(const Lessons&) { return {}; }
};

}  // namespace kevolve
