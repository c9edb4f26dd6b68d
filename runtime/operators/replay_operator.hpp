// ReplayOperator (`operator = "replay"`): replays the kernels an earlier search recorded (its stored
// sources, prompts and replies, in node order), so a search can be re-run and debugged without an LLM
// endpoint. Deterministic: the n-th child made is the recorded search's n-th node.
#pragma once
#include <mutex>

#include "runtime/operators/operator.hpp"

namespace kevolve {

struct RecordedNode {
  uint64_t id = 0;
  std::string source, prompt, reply;
};

class ReplayOperator : public Operator {
 public:
  explicit ReplayOperator(std::vector<RecordedNode> recorded) : recorded_(std::move(recorded)) {}
  std::string name() const override { return "replay"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng&, const OperatorContext&) override {
    std::lock_guard<std::mutex> lock(mu_);
    // Continue after the nodes the graph already holds (a resumed replay), then in recorded order.
    if (next_ < g.size()) next_ = g.size();
    if (next_ >= recorded_.size())
      return Expected<Offspring>::failure("the recorded search has no more kernels (" +
                                          std::to_string(recorded_.size()) + " replayed)");
    const RecordedNode& r = recorded_[next_++];
    Offspring o;
    o.candidate.source = r.source;
    o.candidate.provenance = "replay of node " + std::to_string(r.id) + " (" + operation_name(p.op) + ")";
    o.params["replay"] = std::to_string(r.id);
    o.prompt = r.prompt;
    o.reply = r.reply;
    return o;
  }
  bool can_repair() const override { return true; }

 private:
  std::vector<RecordedNode> recorded_;
  std::mutex mu_;
  size_t next_ = 0;
};

}  // namespace kevolve
