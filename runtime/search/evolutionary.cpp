#include "runtime/search/evolutionary.hpp"

#include <algorithm>
#include <iterator>

namespace kevolve {

EvolutionaryStrategy::Island& EvolutionaryStrategy::island(int32_t i) {
  const size_t k = static_cast<size_t>(std::max(0, i));
  if (k >= islands_.size()) islands_.resize(k + 1);
  return islands_[k];
}

const EvolutionaryStrategy::Island* EvolutionaryStrategy::find_island(int32_t i) const {
  const size_t k = static_cast<size_t>(std::max(0, i));
  return k < islands_.size() ? &islands_[k] : nullptr;
}

void EvolutionaryStrategy::init(const SearchGraph& g) {
  islands_.clear();
  members_.clear();
  for (auto& [id, node] : g.nodes()) observe(g, node);
}

void EvolutionaryStrategy::observe(const SearchGraph&, const NodeRecord& node) {
  if (!node.scored()) return;
  Island& is = island(node.island);
  ++is.born;
  if (!node.correct()) return;
  is.best.insert({-node.fitness, node.id});
  members_.insert(node.id);
  if (is.best.size() > static_cast<size_t>(std::max(1, c_.population))) {  // the worst leaves the population
    members_.erase(std::prev(is.best.end())->second);
    is.best.erase(std::prev(is.best.end()));
  }
}

std::vector<const NodeRecord*> EvolutionaryStrategy::population(const SearchGraph& g, int32_t island) const {
  std::vector<const NodeRecord*> pop;
  const Island* is = find_island(island);
  if (!is) return pop;
  for (auto& [f, id] : is->best)
    if (const NodeRecord* n = g.find(id)) pop.push_back(n);
  return pop;
}

const NodeRecord* EvolutionaryStrategy::select(const std::vector<const NodeRecord*>& pop, Rng& rng) const {
  if (c_.selection == "proportional") {
    double total = 0;
    for (auto* p : pop) total += p->fitness;
    double x = std::uniform_real_distribution<double>(0, total)(rng);
    for (auto* p : pop) {
      if ((x -= p->fitness) <= 0) return p;
    }
    return pop.back();
  }
  const NodeRecord* best = nullptr;
  std::uniform_int_distribution<size_t> pick(0, pop.size() - 1);
  for (int k = 0; k < c_.tournament_size; ++k) {
    const NodeRecord* p = pop[pick(rng)];
    if (!best || p->fitness > best->fitness || (p->fitness == best->fitness && p->id < best->id)) best = p;
  }
  return best;
}

std::vector<Proposal> EvolutionaryStrategy::propose(const SearchGraph& g, size_t n, Rng& rng) {
  if (g.size() == 0) return {{Operation::seed, {}, 0}};
  auto overall = g.best();
  if (!overall) return g.in_flight() ? std::vector<Proposal>{} : repair_proposals(g, c_, n);
  std::vector<Proposal> out;
  std::uniform_real_distribution<double> coin(0, 1);
  for (size_t k = 0; k < n; ++k) {
    const int32_t island = static_cast<int32_t>((g.size() + k) % static_cast<size_t>(c_.islands));
    auto pop = population(g, island);
    if (pop.empty()) {  // a new island starts from the best node found so far
      out.push_back({Operation::migrate, {*overall}, island});
      continue;
    }
    const Island* is = find_island(island);
    const size_t born = is ? is->born : 0;
    const size_t generation = born / static_cast<size_t>(c_.population);
    const int32_t neighbour = (island + c_.islands - 1) % c_.islands;
    if (c_.islands > 1 && generation > 0 && generation % static_cast<size_t>(c_.migration_interval) == 0 &&
        born % static_cast<size_t>(c_.population) == 0) {
      auto theirs = population(g, neighbour);
      if (!theirs.empty() && theirs.front()->fitness > pop.front()->fitness) {
        out.push_back({Operation::migrate, {theirs.front()->id}, island});
        continue;
      }
    }
    const NodeRecord* a = select(pop, rng);
    if (pop.size() >= 2 && coin(rng) < c_.crossover_rate) {
      const NodeRecord* b = select(pop, rng);
      for (int tries = 0; b == a && tries < 4; ++tries) b = select(pop, rng);
      if (b != a) {
        out.push_back({Operation::crossover, {a->id, b->id}, island});
        continue;
      }
    }
    out.push_back({Operation::mutate, {a->id}, island});
  }
  return out;
}

}  // namespace kevolve
