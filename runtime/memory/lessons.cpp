#include "runtime/memory/lessons.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/core/wire.hpp"

namespace kevolve {

std::string lessons_key(const std::string& problem, const std::string& backend, const std::string& hardware) {
  return problem + "|" + backend + "|" + hardware;
}

std::string lessons_search(const std::string& key) { return "memory/" + key; }

bool Lessons::record(const std::string& search, const NodeRecord& n, const std::string& source) {
  if (!n.scored()) return false;
  if (std::find(searches.begin(), searches.end(), search) == searches.end()) searches.push_back(search);
  const std::string outcome = n.status == EvalStatus::ok || n.reason.empty()
                                  ? status_name(n.status)
                                  : std::string(status_name(n.status)) + "/" + n.reason;
  ++outcomes[outcome];
  if (!n.correct() || source.empty()) return false;
  for (auto& e : best)
    if (e.params == n.params && e.source == source) {  // the same kernel measured again: keep the better figure
      if (n.fitness <= e.fitness) return false;
      e.fitness = n.fitness;
      e.search = search;
      e.node = n.id;
      std::stable_sort(best.begin(), best.end(), [](auto& a, auto& b) { return a.fitness > b.fitness; });
      return true;
    }
  if (best.size() >= kKeep && n.fitness <= best.back().fitness) return false;
  best.push_back({search, n.id, n.params, source, n.fitness});
  std::stable_sort(best.begin(), best.end(), [](auto& a, auto& b) { return a.fitness > b.fitness; });
  if (best.size() > kKeep) best.resize(kKeep);
  return true;
}

int64_t Lessons::evaluated() const {
  int64_t n = 0;
  for (auto& [k, v] : outcomes) n += v;
  return n;
}

std::string Lessons::summary() const {
  std::ostringstream s;
  s << "Earlier searches on " << key << ": " << evaluated() << " kernels evaluated in " << searches.size() << " search"
    << (searches.size() == 1 ? "" : "es") << ";";
  std::vector<std::pair<int64_t, std::string>> by;
  for (auto& [k, v] : outcomes) by.push_back({v, k});
  std::sort(by.rbegin(), by.rend());
  for (size_t i = 0; i < by.size(); ++i) s << (i ? "," : "") << " " << by[i].second << " " << by[i].first;
  s << ".";
  for (size_t i = 0; i < best.size(); ++i) {
    char f[32];
    std::snprintf(f, sizeof f, "%.2fx", best[i].fitness);
    s << (i ? "; " : " Best: ") << f << " (search " << best[i].search << ", node " << best[i].node;
    if (!best[i].params.empty()) {
      s << ":";
      for (auto& [k, v] : best[i].params) s << " " << k << "=" << v;
    }
    s << ")";
  }
  if (!best.empty()) s << ".";
  return s.str();
}

std::string encode_lessons(const Lessons& l) {
  wire::Writer w;
  w.u32(1);  // format version
  w.str(l.key);
  w.u32(static_cast<uint32_t>(l.best.size()));
  for (auto& e : l.best) {
    w.str(e.search);
    w.i64(static_cast<int64_t>(e.node));
    w.u32(static_cast<uint32_t>(e.params.size()));
    for (auto& [k, v] : e.params) {
      w.str(k);
      w.str(v);
    }
    w.str(e.source);
    w.f64(e.fitness);
  }
  w.u32(static_cast<uint32_t>(l.outcomes.size()));
  for (auto& [k, v] : l.outcomes) {
    w.str(k);
    w.i64(v);
  }
  w.u32(static_cast<uint32_t>(l.searches.size()));
  for (auto& s : l.searches) w.str(s);
  return std::string(w.bytes().begin(), w.bytes().end());
}

Expected<Lessons> decode_lessons(const std::string& bytes) {
  using R = Expected<Lessons>;
  std::vector<char> b(bytes.begin(), bytes.end());
  try {
    wire::Reader r(b);
    if (r.u32() != 1) return R::failure("stored lessons have an unknown format version");
    Lessons l;
    l.key = r.str();
    l.best.resize(r.count());
    for (auto& e : l.best) {
      e.search = r.str();
      e.node = static_cast<uint64_t>(r.i64());
      for (uint32_t n = r.u32(); n > 0; --n) {
        std::string k = r.str();
        e.params[k] = r.str();
      }
      e.source = r.str();
      e.fitness = r.f64();
    }
    for (uint32_t n = r.u32(); n > 0; --n) {
      std::string k = r.str();
      l.outcomes[k] = r.i64();
    }
    l.searches.resize(r.count());
    for (auto& s : l.searches) s = r.str();
    return l;
  } catch (const wire::DecodeError& e) { return R::failure(std::string("stored lessons are damaged: ") + e.what()); }
}

Lessons recall_lessons(Store& store, const std::string& key, std::string* note) {
  Lessons empty;
  empty.key = key;
  auto bytes = store.artifact(lessons_search(key), 0, "lessons");
  if (!bytes) return empty;
  auto l = decode_lessons(*bytes);
  if (!l) {
    if (note) *note = l.error();
    return empty;
  }
  l->key = key;
  return *l;
}

}  // namespace kevolve
