// apply_unified_diff: applies a unified diff, as language models write them, to a source text.
//
// Accepted: optional file headers (`diff --git`, `index`, `--- a/x`, `+++ b/x`), one or more hunks
// introduced by `@@ -l,s +l,s @@` (numbers may be wrong, partial or missing: `@@ ... @@`, `@@`), and hunk
// lines starting with ' ' (context), '-' (removed) or '+' (added). A diff without any `@@` line is one hunk
// without a position. Tolerated: trailing whitespace differences, empty context lines that lost their
// leading space, a missing or extra "\ No newline at end of file", blank lines at the end of a hunk, and,
// when nothing matches exactly, indentation differences. Hunk counts are ignored.
//
// Each hunk is located by its context and removed lines, searched over the text after the previous hunk
// (hunks apply in order), nearest to the stated line first. It must match in exactly one place; when it
// matches in several, the one at exactly the stated line (shifted by the earlier hunks) is taken, and
// without such a line the diff fails as ambiguous. A hunk without context or removed lines inserts its
// lines after the stated line, or at the end when no line is stated.
//
// Errors name the hunk (1-based) and the first of its lines that could not be matched, with `name` for
// the original, e.g. "hunk 2: line 'float s = 0;' not found in the parent".
#pragma once
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve {

Expected<std::string> apply_unified_diff(const std::string& original, const std::string& diff,
                                         const std::string& name = "the original");

}  // namespace kevolve
