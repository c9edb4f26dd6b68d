#include "runtime/search/search_digest.hpp"

#include <algorithm>

namespace kevolve {
namespace {

// Fittest first, lowest id on ties.
bool fitter(double fa, uint64_t ia, double fb, uint64_t ib) { return fa != fb ? fa > fb : ia < ib; }

// Keeps the `keep` fittest of `v` (sorted, fittest first); `key` gives (fitness, id) of an element.
template <class T, class Key>
void trim(std::vector<T>& v, size_t keep, Key key) {
  auto less = [&](const T& a, const T& b) {
    const auto [fa, ia] = key(a);
    const auto [fb, ib] = key(b);
    return fitter(fa, ia, fb, ib);
  };
  if (v.size() > keep) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(keep), v.end(), less);
    v.resize(keep);
  }
  std::sort(v.begin(), v.end(), less);
}

std::pair<double, uint64_t> record_key(const NodeRecord& n) { return {n.fitness, n.id}; }
std::pair<double, uint64_t> pair_key(const std::pair<double, uint64_t>& p) { return p; }

}  // namespace

SearchDigest::SearchDigest(DigestLimits limits) : limits_(limits) {
  limits_.mix_slices = std::max<size_t>(2, limits_.mix_slices);
}

void SearchDigest::add(NodeRecord& n) {
  ++total_;
  counts_.add(n);
  if (n.scored()) {
    ++scored_;
    const std::string status = status_name(n.status);
    ++by_status_[status];
    // the failure mix: slices of slice_size_ scored nodes; when all of them are full, pairs merge
    if (mix_.empty() || slice_fill_ == slice_size_) {
      if (mix_.size() == limits_.mix_slices) {
        std::vector<MixSlice> merged;
        for (size_t i = 0; i + 1 < mix_.size(); i += 2) {
          MixSlice m = std::move(mix_[i]);
          for (auto& [k, v] : mix_[i + 1].counts) m.counts[k] += v;
          m.upto = mix_[i + 1].upto;
          merged.push_back(std::move(m));
        }
        mix_ = std::move(merged);
        slice_size_ *= 2;
        slice_fill_ = slice_size_;  // the last merged slice is full
      }
      if (mix_.empty() || slice_fill_ == slice_size_) {
        mix_.push_back(MixSlice{});
        slice_fill_ = 0;
      }
    }
    ++slice_fill_;
    mix_.back().upto = scored_;
    ++mix_.back().counts[status];
    add_class_score(classes_, n);
  }
  if (n.correct()) {
    if (n.fitness > curve_best_) {
      curve_best_ = n.fitness;
      curve_.push_back({scored_, n.fitness, n.id});
    }
    if (!best_ || fitter(n.fitness, n.id, best_fitness_, best_)) {
      best_ = n.id;
      best_fitness_ = n.fitness;
      best_class_ = n.device_class;
    }
    if (!seed_ && n.parents.empty()) {
      seed_ = n.id;
      seed_fitness_ = n.fitness;
    }
    if (limits_.fittest > 0) {
      // once trimmed, a node below the last kept one can never enter
      if (!fittest_floor_ || fitter(n.fitness, n.id, fittest_floor_->first, fittest_floor_->second)) {
        fittest_.push_back({n.fitness, n.id});
        if (fittest_.size() >= 2 * limits_.fittest) {
          trim(fittest_, limits_.fittest, pair_key);
          fittest_floor_ = fittest_.back();
        }
      }
    }
    if (limits_.top_records > 0) {
      if (!top_floor_ || fitter(n.fitness, n.id, top_floor_->first, top_floor_->second)) {
        top_.push_back(n);  // a copy: `all_` may take the record below
        if (top_.size() >= 2 * limits_.top_records) {
          trim(top_, limits_.top_records, record_key);
          top_floor_ = record_key(top_.back());
        }
      }
    }
  }
  if (limits_.latest > 0) {
    latest_.push_back(n.id);
    if (latest_.size() > limits_.latest) latest_.pop_front();
  }
  if (!all_overflowed_) {
    if (all_.size() < limits_.keep_all) {
      all_.push_back(std::move(n));
    } else {
      all_overflowed_ = true;
      std::vector<NodeRecord>().swap(all_);
    }
  }
}

std::vector<CurvePoint> SearchDigest::curve() const {
  std::vector<CurvePoint> c = curve_;
  if (scored_ > 0) c.push_back({scored_, curve_best_, 0});
  return c;
}

std::vector<MixSlice> SearchDigest::mix() const { return mix_; }

std::vector<ClassScore> SearchDigest::classes() const {
  std::vector<ClassScore> out;
  for (auto& [k, c] : classes_) out.push_back(c);
  return out;
}

std::vector<NodeRecord> SearchDigest::top() const {
  trim(top_, limits_.top_records, record_key);
  return top_;
}

std::vector<uint64_t> SearchDigest::fittest() const {
  trim(fittest_, limits_.fittest, pair_key);
  std::vector<uint64_t> ids;
  for (auto& [f, id] : fittest_) ids.push_back(id);
  return ids;
}

std::vector<uint64_t> SearchDigest::latest() const { return {latest_.begin(), latest_.end()}; }

SearchDigest digest_of(const std::vector<NodeRecord>& nodes, DigestLimits limits) {
  limits.keep_all = std::max(limits.keep_all, nodes.size());
  SearchDigest d(limits);
  for (auto n : nodes) d.add(n);
  return d;
}

}  // namespace kevolve
