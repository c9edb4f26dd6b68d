// Fuzzing the diff applier (runtime/operators/apply_diff): unified diffs as models write them, damaged.
// Properties: every diff ends in a text or an error with a message — no crash, no hang, no exception —
// and a well-formed diff of a random edit (right line numbers, three lines of context) applies to give
// exactly the edited text.
//
// Corpus: tests/fuzz/corpus/diff/NAME.orig (an original) and NAME.diff (a diff of it).
#include <catch2/catch.hpp>

#include "runtime/operators/apply_diff.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kevolve;
using namespace kevolve::fuzz;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (auto& l : lines) s += l + "\n";
  return s;
}

struct Edit {
  std::string edited, diff;
};

// One random hunk over `original` (ending in a newline): delete 0-3 lines at a random place and insert
// 0-3 lines taken from elsewhere in the file or made up, written as a unified diff with correct numbers.
std::optional<Edit> random_edit(Mutator& m, const std::string& original) {
  auto a = lines_of(original);
  if (a.empty()) return std::nullopt;
  const size_t start = m.below(a.size() + 1);
  const size_t del = std::min<size_t>(m.below(4), a.size() - start);
  std::vector<std::string> ins;
  for (uint64_t n = m.below(4); n > 0; --n)
    ins.push_back(m.chance(50) ? a[m.below(a.size())] : "  int fuzz_" + std::to_string(m.below(1000)) + " = 0;");
  if (del == 0 && ins.empty()) return std::nullopt;
  const size_t c0 = start >= 3 ? start - 3 : 0, c1 = std::min(a.size(), start + del + 3);
  std::vector<std::string> body;
  for (size_t i = c0; i < start; ++i) body.push_back(" " + a[i]);
  for (size_t i = start; i < start + del; ++i) body.push_back("-" + a[i]);
  for (auto& l : ins) body.push_back("+" + l);
  for (size_t i = start + del; i < c1; ++i) body.push_back(" " + a[i]);
  for (auto& l : body)  // a line that reads as a file header is not a diff a model would write
    if (l.rfind("+++", 0) == 0 || l.rfind("---", 0) == 0) return std::nullopt;
  const size_t old_count = c1 - c0, new_count = old_count - del + ins.size();
  std::ostringstream d;
  d << "--- a/kernel.cpp\n+++ b/kernel.cpp\n@@ -" << (old_count ? c0 + 1 : c0) << "," << old_count << " +"
    << (new_count ? c0 + 1 : c0) << "," << new_count << " @@\n"
    << joined(body);
  std::vector<std::string> b(a.begin(), a.begin() + start);
  b.insert(b.end(), ins.begin(), ins.end());
  b.insert(b.end(), a.begin() + start + del, a.end());
  return Edit{joined(b), d.str()};
}

}  // namespace

TEST_CASE("fuzz: a well-formed diff of a random edit applies exactly", "[fuzz]") {
  auto originals = load_corpus("diff", ".orig");
  REQUIRE(originals.size() >= 2);
  Mutator m(seed() + 50);
  uint64_t tried = 0;
  for (uint64_t i = 0; i < iterations(8000); ++i) {
    const auto& original = originals[m.below(originals.size())];
    auto e = random_edit(m, original);
    if (!e) continue;
    ++tried;
    auto r = apply_unified_diff(original, e->diff, "the parent");
    if (!r) FAIL("refused (" << r.error() << "): " << keep_failure("diff-edit", i, e->diff));
    if (*r != e->edited) FAIL("applied to something else: " << keep_failure("diff-edit", i, e->diff));
  }
  CHECK(tried > 0);
}

TEST_CASE("fuzz: damaged diffs end in a text or an error, never a crash", "[fuzz]") {
  auto originals = load_corpus("diff", ".orig");
  auto diffs = load_corpus("diff", ".diff");
  REQUIRE(originals.size() >= 2);
  REQUIRE(diffs.size() >= 2);
  Mutator m(seed() + 51);
  const uint64_t n = iterations(15000);
  for (uint64_t i = 0; i < n; ++i) {
    std::string original = originals[m.below(originals.size())];
    std::string diff = diffs[m.below(diffs.size())];
    if (m.chance(30)) {  // a valid diff of this original, then damaged
      if (auto e = random_edit(m, original)) diff = e->diff;
    }
    diff = m.bytes(diff, diffs);
    if (m.chance(20)) original = m.bytes(original, originals);
    if (trace()) std::cerr << "diff " << i << "\n";
    try {
      auto r = apply_unified_diff(original, diff, "the parent");
      if (!r && r.error().empty()) FAIL("an error without a message: " << keep_failure("diff", i, diff));
    } catch (const std::exception& e) {
      FAIL("exception escaped (" << e.what() << "): " << keep_failure("diff", i, diff));
    }
  }
}
