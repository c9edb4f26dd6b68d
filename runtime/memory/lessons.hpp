// Lessons: the context memory kept across searches, for one problem on one backend and hardware target —
// the best kernels found so far (with their sources, so a new search can start from them) and how the
// kernels tried so far ended (correct, compile errors, mismatches by reason, ...). Pure C++; the
// context-memory actor (actors/memory/) keeps it up to date and stores it with the searches.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/node.hpp"
#include "storage/store.hpp"

namespace kevolve {

struct Exemplar {
  std::string search;
  uint64_t node = 0;
  Params params;
  std::string source;
  double fitness = 0;  // speedup over the reference when it was measured
};

struct Lessons {
  static constexpr size_t kKeep = 3;  // best kernels kept

  std::string key;                          // lessons_key(problem, backend, hardware)
  std::vector<Exemplar> best;               // highest fitness first, at most kKeep, one per parameter set / source
  std::map<std::string, int64_t> outcomes;  // "ok", "compile_error", "incorrect/mismatch", "rejected/poison", ...
  std::vector<std::string> searches;        // searches that contributed, in order of first contribution

  // Counts one scored node of `search`; a correct node may enter `best` (its source is then kept).
  // Returns true when `best` changed.
  bool record(const std::string& search, const NodeRecord& n, const std::string& source);
  int64_t evaluated() const;
  // One paragraph for people and prompts: how many kernels, how they ended, the best ones.
  std::string summary() const;
};

std::string lessons_key(const std::string& problem, const std::string& backend, const std::string& hardware);
// Where lessons are stored: the artifact (lessons_search(key), node 0, "lessons").
std::string lessons_search(const std::string& key);

// The lessons stored for `key`, or empty lessons with that key (an unreadable record is reported in `note`).
Lessons recall_lessons(Store& store, const std::string& key, std::string* note = nullptr);

std::string encode_lessons(const Lessons& l);
Expected<Lessons> decode_lessons(const std::string& bytes);

}  // namespace kevolve
