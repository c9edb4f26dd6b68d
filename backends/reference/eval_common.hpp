// Pieces both torch-side evaluators (CPU and CUDA) share: readable indices and shapes for messages, the
// seed mixer, and the cache of generated inputs and reference outputs. Header-only; torch included.
#pragma once
#include <ATen/ATen.h>

#include <cstdlib>
#include <list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/records/problem.hpp"

namespace kevolve::reference {

using Tensors = std::vector<at::Tensor>;

inline std::string index_string(const at::Tensor& t, int64_t flat) {
  if (flat < 0) return "?";
  std::ostringstream os;
  os << "[";
  std::vector<int64_t> idx(static_cast<size_t>(t.dim()));
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = flat % t.size(d);
    flat /= t.size(d);
  }
  for (size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
  os << "]";
  return os.str();
}

inline std::string shape_string(const ShapeBinding& b) {
  std::string s;
  for (auto& [k, v] : b) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

inline uint64_t mix_seed(uint64_t base, uint64_t a, uint64_t b) {
  uint64_t x = base * 0x9E3779B97F4A7C15ull ^ (a + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^
               (b + 1) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x & 0x7FFFFFFFFFFFull;
}

// Generated inputs and reference outputs, kept across evaluations in this worker process: the same
// spec, shape and seed always give the same data, so later candidates skip generation and the
// reference. Entries are never modified (slots copy them into the arena); least recently used go
// first once KEVOLVE_DATA_CACHE_MB (default 1024) is exceeded. Entries are host tensors.
class DataCache {
 public:
  static DataCache& instance() {
    static DataCache c;
    return c;
  }
  bool get(const std::string& key, Tensors& in, Tensors& exp) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    lru_.splice(lru_.begin(), lru_, it->second.pos);
    in = it->second.inputs;
    exp = it->second.expected;
    return true;
  }
  void put(const std::string& key, const Tensors& in, const Tensors& exp) {
    int64_t bytes = 0;
    for (auto* v : {&in, &exp})
      for (auto& t : *v) bytes += t.numel() * t.element_size();
    if (bytes > cap_ || entries_.count(key)) return;
    while (used_ + bytes > cap_ && !lru_.empty()) {
      auto& e = entries_.at(lru_.back());
      used_ -= e.bytes;
      entries_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key);
    entries_[key] = {in, exp, bytes, lru_.begin()};
    used_ += bytes;
  }

 private:
  DataCache() {
    const char* mb = std::getenv("KEVOLVE_DATA_CACHE_MB");
    cap_ = (mb ? std::atoll(mb) : 1024) << 20;
  }
  struct Entry {
    Tensors inputs, expected;
    int64_t bytes;
    std::list<std::string>::iterator pos;
  };
  std::map<std::string, Entry> entries_;
  std::list<std::string> lru_;
  int64_t used_ = 0, cap_ = 0;
};

}  // namespace kevolve::reference
