#include "runtime/operators/apply_diff.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace kevolve {

namespace {

using R = Expected<std::string>;

struct HunkLine {
  char kind = ' ';  // ' ' context, '-' removed, '+' added
  std::string text;
  bool bare = false;  // an empty diff line (a context line that lost its leading space)
};

struct Hunk {
  long start = -1;  // the stated first line of the original (1-based); -1 when not stated
  long count = -1;  // the stated number of original lines; -1 when not stated
  std::vector<HunkLine> lines;
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<std::string> split_lines(const std::string& s, bool& trailing_newline) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  trailing_newline = !s.empty() && s.back() == '\n';
  return out;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\f' || s.back() == '\v'))
    s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = rtrim(s);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// loose = false: equal but for trailing whitespace; loose = true: equal but for indentation as well.
bool same(std::string_view a, std::string_view b, bool loose) {
  return loose ? trim(a) == trim(b) : rtrim(a) == rtrim(b);
}

std::string quoted(std::string_view s) {
  s = trim(s);
  if (s.empty()) return "an empty line";
  std::string q(s.substr(0, 100));
  if (s.size() > 100) q += "...";
  return "line '" + q + "'";
}

// "@@ -12,5 +12,7 @@ ...", "@@ -12 +12 @@", "@@ ... @@", "@@": the stated original range, where given.
void parse_header(std::string_view h, Hunk& hunk) {
  h.remove_prefix(2);
  while (!h.empty() && h.front() == ' ') h.remove_prefix(1);
  if (h.empty() || h.front() != '-') return;
  h.remove_prefix(1);
  size_t n = 0;
  while (n < h.size() && std::isdigit(static_cast<unsigned char>(h[n]))) ++n;
  if (n == 0) return;
  hunk.start = std::strtol(std::string(h.substr(0, n)).c_str(), nullptr, 10);
  h.remove_prefix(n);
  if (!h.empty() && h.front() == ',') {
    h.remove_prefix(1);
    size_t m = 0;
    while (m < h.size() && std::isdigit(static_cast<unsigned char>(h[m]))) ++m;
    if (m > 0) hunk.count = std::strtol(std::string(h.substr(0, m)).c_str(), nullptr, 10);
  } else {
    hunk.count = 1;
  }
}

Expected<std::vector<Hunk>> parse(const std::string& diff) {
  using E = Expected<std::vector<Hunk>>;
  bool nl = false;
  std::vector<std::string> lines = split_lines(diff, nl);
  for (auto& l : lines)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  const bool positioned =
      std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return starts_with(l, "@@"); });

  std::vector<Hunk> hunks;
  bool in_hunk = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& s = lines[i];
    if (starts_with(s, "@@")) {
      hunks.emplace_back();
      parse_header(s, hunks.back());
      in_hunk = true;
      continue;
    }
    // File headers end a hunk: "diff --git ...", and a "--- x" line directly followed by "+++ y".
    if (starts_with(s, "diff --git ") || starts_with(s, "diff -u")) {
      in_hunk = false;
      continue;
    }
    if (starts_with(s, "--- ") && i + 1 < lines.size() && starts_with(lines[i + 1], "+++ ")) {
      in_hunk = false;
      ++i;
      continue;
    }
    if (!in_hunk) {
      if (positioned) continue;  // text before the first hunk ("index ...", "new file mode ...")
      if (s.empty() || starts_with(s, "--- ") || starts_with(s, "+++ ") || starts_with(s, "index ")) continue;
      hunks.emplace_back();  // a diff without "@@": one hunk without a position
      in_hunk = true;
    }
    if (starts_with(s, "\\")) continue;  // "\ No newline at end of file"
    HunkLine hl;
    if (s.empty())
      hl.bare = true;
    else if (s[0] == ' ' || s[0] == '-' || s[0] == '+')
      hl = {s[0], s.substr(1), false};
    else
      hl.text = s;  // a context line that lost its leading space
    hunks.back().lines.push_back(std::move(hl));
  }
  // Blank lines at the end of a hunk are most often the blank line before the closing fence.
  for (auto& h : hunks)
    while (!h.lines.empty() && h.lines.back().bare) h.lines.pop_back();
  hunks.erase(std::remove_if(hunks.begin(), hunks.end(), [](const Hunk& h) { return h.lines.empty(); }), hunks.end());
  const bool changes = std::any_of(hunks.begin(), hunks.end(), [](const Hunk& h) {
    return std::any_of(h.lines.begin(), h.lines.end(), [](const HunkLine& l) { return l.kind != ' '; });
  });
  if (hunks.empty() || !changes)
    return E::failure("the diff changes nothing (no hunk with lines starting with '-' or '+')");
  return hunks;
}

// How many of `old` match the file consecutively from line `p`.
size_t prefix_match(const std::vector<std::string>& file, size_t p, const std::vector<const HunkLine*>& old,
                    bool loose) {
  size_t m = 0;
  while (m < old.size() && p + m < file.size() && same(file[p + m], old[m]->text, loose)) ++m;
  return m;
}

std::string line_list(const std::vector<size_t>& at) {
  std::string s;
  for (size_t i = 0; i < at.size() && i < 5; ++i) s += (s.empty() ? "" : ", ") + std::to_string(at[i] + 1);
  if (at.size() > 5) s += ", ...";
  return s;
}

}  // namespace

Expected<std::string> apply_unified_diff(const std::string& original, const std::string& diff,
                                         const std::string& name) {
  auto hunks = parse(diff);
  if (!hunks) return R::failure(hunks.error());
  bool trailing_newline = false;
  std::vector<std::string> file = split_lines(original, trailing_newline);

  size_t floor = 0;  // hunks apply in order: each one after the lines the previous one wrote
  long delta = 0;    // lines added minus lines removed by the hunks so far
  for (size_t k = 0; k < hunks->size(); ++k) {
    const Hunk& h = (*hunks)[k];
    const std::string which = "hunk " + std::to_string(k + 1);
    std::vector<const HunkLine*> old;
    size_t added = 0, removed = 0;
    for (auto& l : h.lines) {
      if (l.kind != '+') old.push_back(&l);
      added += l.kind == '+';
      removed += l.kind == '-';
    }
    // Where the hunk says it goes, in the file as patched so far (-1: nowhere stated).
    long expected = -1;
    if (h.start >= 0) expected = (old.empty() && h.count == 0 ? h.start : std::max(0L, h.start - 1)) + delta;

    size_t at = 0;
    if (old.empty()) {
      at = expected < 0 ? file.size()
                        : std::clamp<size_t>(static_cast<size_t>(std::max(0L, expected)), floor, file.size());
    } else {
      std::vector<size_t> found;
      for (bool loose : {false, true}) {
        for (size_t p = floor; p + old.size() <= file.size(); ++p)
          if (prefix_match(file, p, old, loose) == old.size()) found.push_back(p);
        if (!found.empty()) break;
      }
      if (expected >= 0)  // nearest to the stated line first
        std::stable_sort(found.begin(), found.end(), [&](size_t a, size_t b) {
          return std::labs(static_cast<long>(a) - expected) < std::labs(static_cast<long>(b) - expected);
        });
      const bool pinned = expected >= 0 && !found.empty() && static_cast<long>(found.front()) == expected;
      if (found.size() > 1 && !pinned)
        return R::failure(which + " is ambiguous: its context and removed lines match " + std::to_string(found.size()) +
                          " places in " + name + " (lines " + line_list(found) + "); give more context lines");
      if (found.empty()) {
        // The first line that cannot be matched: follow the longest run of the hunk's lines from its start.
        size_t best = 0, best_p = floor;
        bool any = false;
        for (size_t p = floor; p < file.size(); ++p) {
          const size_t m = prefix_match(file, p, old, true);
          const bool nearer = expected >= 0 && std::labs(static_cast<long>(p) - expected) <
                                                   std::labs(static_cast<long>(best_p) - expected);
          if (!any || m > best || (m == best && m > 0 && nearer)) best = m, best_p = p, any = true;
        }
        std::string why = which + ": " + quoted(old[best]->text) + " not found in " + name;
        if (best > 0) {
          const size_t stop = best_p + best;
          why += " (the hunk's lines before it match from line " + std::to_string(best_p + 1) + ", where line " +
                 std::to_string(stop + 1) +
                 (stop < file.size() ? " is '" + std::string(trim(file[stop]).substr(0, 100)) + "')"
                                     : " is past the end)");
        } else if (k > 0) {
          for (size_t p = 0; p < floor && p + old.size() <= file.size(); ++p)
            if (prefix_match(file, p, old, true) == old.size()) {
              why += " after hunk " + std::to_string(k) + " (it matches at line " + std::to_string(p + 1) +
                     ", before that hunk's change: hunks must be in file order)";
              break;
            }
        }
        return R::failure(why);
      }
      at = found.front();
    }

    std::vector<std::string> written;
    size_t j = at;
    for (auto& l : h.lines) {
      if (l.kind == '+')
        written.push_back(l.text);
      else if (l.kind == '-')
        ++j;
      else
        written.push_back(file[j++]);  // context keeps the original's text (its whitespace)
    }
    file.erase(file.begin() + static_cast<long>(at), file.begin() + static_cast<long>(j));
    file.insert(file.begin() + static_cast<long>(at), written.begin(), written.end());
    floor = at + written.size();
    delta += static_cast<long>(added) - static_cast<long>(removed);
  }
  std::string out;
  for (size_t i = 0; i < file.size(); ++i) out += (i ? "\n" : "") + file[i];
  if (trailing_newline || (original.empty() && !out.empty())) out += '\n';
  return out;
}

}  // namespace kevolve
