#include "runtime/search/graph.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>

namespace kevolve {

const char* node_state_name(NodeState s) {
  switch (s) {
    case NodeState::proposed:
      return "proposed";
    case NodeState::built:
      return "built";
    case NodeState::queued:
      return "queued";
    case NodeState::evaluated:
      return "evaluated";
    case NodeState::scored:
      return "scored";
  }
  return "?";
}

void SearchGraph::upsert(const NodeRecord& n) {
  auto it = nodes_.find(n.id);
  if (it == nodes_.end()) {
    const bool again = !mark_seen(n.id);  // dropped by trim() and sent again: held, not counted twice
    if (!again) {
      for (auto p : n.parents)
        // A dropped parent is never asked; one not added yet (a load from the newest node back) will be.
        if (window_ == 0 || nodes_.count(p) || !was_seen(p)) children_[p].push_back(n.id);
      by_params_->insert(params_hash(n.params));
      ++added_;
      if (n.scored()) ++scored_;
      if (n.correct()) ++correct_;
    }
    rank(nullptr, n);
    nodes_.emplace(n.id, n);
    return;
  }
  if (!it->second.scored() && n.scored()) ++scored_;
  if (it->second.scored() && !n.scored()) --scored_;
  if (!it->second.correct() && n.correct()) ++correct_;
  if (it->second.correct() && !n.correct()) --correct_;
  rank(&it->second, n);
  it->second = n;
}

// top_ is always a prefix of the whole ranking: a node leaves it for a better one, or when it changes.
void SearchGraph::rank(const NodeRecord* before, const NodeRecord& after) {
  if (before && before->correct()) top_.erase({-before->fitness, before->id});
  if (!after.correct()) return;
  top_.insert({-after.fitness, after.id});
  if (top_.size() > kTop) top_.erase(std::prev(top_.end()));
}

void SearchGraph::set_state(uint64_t id, NodeState s) {
  auto it = nodes_.find(id);
  if (it != nodes_.end() && !it->second.scored() && s != NodeState::scored) it->second.state = s;
}

const NodeRecord* SearchGraph::find(uint64_t id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

const std::vector<uint64_t>& SearchGraph::children(uint64_t id) const {
  static const std::vector<uint64_t> none;
  auto it = children_.find(id);
  return it == children_.end() ? none : it->second;
}

std::vector<uint64_t> SearchGraph::roots() const {
  std::vector<uint64_t> r;
  for (auto& [id, n] : nodes_)
    if (n.parents.empty()) r.push_back(id);
  return r;
}

std::optional<uint64_t> SearchGraph::best() const {
  if (!top_.empty()) return top_.begin()->second;
  std::optional<uint64_t> b;  // every ranked node changed since: the held nodes answer
  double f = -1;
  for (auto& [id, n] : nodes_)
    if (n.correct() && n.fitness > f) {
      f = n.fitness;
      b = id;
    }
  return b;
}

std::vector<uint64_t> SearchGraph::best_k(size_t k) const {
  if (k <= top_.size() || top_.size() == correct_) {
    std::vector<uint64_t> out;
    for (auto it = top_.begin(); it != top_.end() && out.size() < k; ++it) out.push_back(it->second);
    return out;
  }
  std::vector<const NodeRecord*> correct;
  for (auto& [id, n] : nodes_)
    if (n.correct()) correct.push_back(&n);
  std::stable_sort(correct.begin(), correct.end(), [](auto* a, auto* b) { return a->fitness > b->fitness; });
  std::vector<uint64_t> out;
  for (size_t i = 0; i < correct.size() && i < k; ++i) out.push_back(correct[i]->id);
  return out;
}

void NodeCounts::add(const NodeRecord& n) {
  if (!n.scored()) {
    ++in_flight;
    return;
  }
  ++evaluated;
  ++(n.correct() ? correct : failed);
}

NodeCounts count_nodes(const std::vector<NodeRecord>& nodes) {
  NodeCounts c;
  for (auto& n : nodes) c.add(n);
  return c;
}

bool SearchGraph::was_seen(uint64_t id) const {
  if (id >= (uint64_t(1) << 27)) return seen_sparse_.count(id) > 0;
  return id < seen_.size() && seen_[id];
}

bool SearchGraph::mark_seen(uint64_t id) {
  if (id >= (uint64_t(1) << 27)) return seen_sparse_.insert(id).second;  // ids are dense from 1: not in a search
  if (id >= seen_.size()) seen_.resize(std::max<size_t>(id + 1, seen_.size() * 2));
  const bool first = !seen_[id];
  seen_[id] = true;
  return first;
}

void SearchGraph::trim(const std::function<bool(const NodeRecord&)>& keep) {
  // A pass over the held nodes once a quarter of the window was added since the last: O(1) per node added,
  // however many nodes `keep` holds.
  if (window_ == 0 || nodes_.size() <= window_ || nodes_.size() < next_trim_) return;
  std::unordered_set<uint64_t> ranked;
  for (auto& [f, id] : top_) ranked.insert(id);
  for (auto it = nodes_.begin(); it != nodes_.end() && nodes_.size() > window_;) {
    if (ranked.count(it->first) || (keep && keep(it->second))) {
      ++it;
      continue;
    }
    children_.erase(it->first);
    it = nodes_.erase(it);
  }
  next_trim_ = std::max(nodes_.size(), window_) + window_ / 4 + 1;
}

bool SearchGraph::has_params(const Params& p) const { return by_params_->contains(params_hash(p)); }

ParamIndex::ParamIndex(Lookup stored, size_t sweep_at)
    : stored_(std::move(stored)), sweep_base_(std::max<size_t>(sweep_at, 1)), sweep_at_(sweep_base_) {}

bool ParamIndex::insert(uint64_t h) {
  std::unique_lock lock(m_);
  if (set_.contains(h) || (stored_ && stored_(h))) return false;
  set_.insert(h);
  if (stored_ && set_.size() >= sweep_at_) sweep();
  return true;
}

bool ParamIndex::contains(uint64_t h) const {
  std::shared_lock lock(m_);
  return set_.contains(h) || (stored_ && stored_(h));
}

size_t ParamIndex::held() const {
  std::shared_lock lock(m_);
  return set_.size();
}

void ParamIndex::sweep() {
  HashSet64 pending;
  set_.each([&](uint64_t k) {
    if (!stored_(k)) pending.insert(k);
  });
  set_ = std::move(pending);
  // Many still pending (the store is not written, e.g. after a refused write): sweep again only once as
  // many more were added, so a sweep stays O(1) per insert.
  sweep_at_ = std::max(sweep_base_, 2 * set_.size());
}

bool HashSet64::insert(uint64_t h) {
  if (contains(h)) return false;
  if ((size_ + 1) * 10 > slots_.size() * 7) {  // grow to twice the slots, rehashing every held key
    std::vector<uint64_t> old(std::max<size_t>(64, slots_.size() * 2), 0);
    old.swap(slots_);
    for (uint64_t k : old)
      if (k != 0) place(k);
  }
  place(key(h));
  ++size_;
  return true;
}

void HashSet64::place(uint64_t k) {
  size_t i = k & (slots_.size() - 1);
  while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
  slots_[i] = k;
}

bool HashSet64::contains(uint64_t h) const {
  if (slots_.empty()) return false;
  const uint64_t k = key(h);
  for (size_t i = k & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i] == k) return true;
    if (slots_[i] == 0) return false;
  }
}

}  // namespace kevolve
