// Unified diffs as models write them, applied to a parent kernel: right, wrong or missing line numbers,
// several hunks, whitespace noise, and the failures (ambiguous or missing context) with their reasons.
#include <catch2/catch.hpp>

#include "runtime/operators/apply_diff.hpp"
#include "runtime/operators/llm_operator.hpp"

using namespace kevolve;

namespace {

// 24 lines; lines 14 and 19 are the same loop header.
const std::string kParent = R"(// softmax_rows, naive: one row at a time, three scalar passes.
#include "kevolve_kernel.h"
#include <cmath>

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];
  for (int64_t r = 0; r < R; ++r) {
    float m = x[r * C];
    for (int64_t c = 1; c < C; ++c)
      if (x[r * C + c] > m) m = x[r * C + c];
    double s = 0;
    for (int64_t c = 0; c < C; ++c) {
      y[r * C + c] = std::exp(x[r * C + c] - m);
      s += y[r * C + c];
    }
    const float inv = float(1.0 / s);
    for (int64_t c = 0; c < C; ++c) {
      y[r * C + c] *= inv;
    }
  }
  return 0;
}
)";

// `src` with the first occurrence of `from` replaced by `to` (the from text must be there).
std::string replaced(std::string src, const std::string& from, const std::string& to) {
  const size_t at = src.find(from);
  REQUIRE(at != std::string::npos);
  return src.replace(at, from.size(), to);
}

const std::string kInvHunkBody =
    "       s += y[r * C + c];\n"
    "     }\n"
    "-    const float inv = float(1.0 / s);\n"
    "+    const float inv = static_cast<float>(1.0 / s);\n"
    "     for (int64_t c = 0; c < C; ++c) {\n";

std::string inv_patched() {
  return replaced(kParent, "const float inv = float(1.0 / s);", "const float inv = static_cast<float>(1.0 / s);");
}

}  // namespace

TEST_CASE("a one-hunk diff with correct line numbers replaces the changed line", "[diff]") {
  const std::string diff =
      "--- a/kernel.cpp\n+++ b/kernel.cpp\n@@ -16,4 +16,4 @@ extern \"C\" int kevolve_kernel(const kv_args* a) {\n" +
      kInvHunkBody;
  auto out = apply_unified_diff(kParent, diff);
  REQUIRE(out);
  CHECK(*out == inv_patched());
}

TEST_CASE("line numbers that are wrong, partial or missing do not matter when the context is unique", "[diff]") {
  for (const std::string header : {"@@ -3,4 +3,4 @@", "@@ -160,4 +160,4 @@", "@@ ... @@", "@@", "@@ -16 +16 @@"}) {
    INFO(header);
    auto out = apply_unified_diff(kParent, header + "\n" + kInvHunkBody);
    REQUIRE(out);
    CHECK(*out == inv_patched());
  }
  // No hunk header at all: the lines after the file headers are one hunk.
  auto out = apply_unified_diff(kParent, "--- kernel.cpp\n+++ kernel.cpp\n" + kInvHunkBody);
  REQUIRE(out);
  CHECK(*out == inv_patched());
}

TEST_CASE("two hunks apply in order, the second located after the first changed the line count", "[diff]") {
  const std::string diff =
      "diff --git a/kernel.cpp b/kernel.cpp\n"
      "index 3b18e51..a9c0f2d 100644\n"
      "--- a/kernel.cpp\n"
      "+++ b/kernel.cpp\n"
      "@@ -1,4 +1,5 @@\n"
      " // softmax_rows, naive: one row at a time, three scalar passes.\n"
      " #include \"kevolve_kernel.h\"\n"
      "+#include <algorithm>\n"
      " #include <cmath>\n"
      " \n"
      "@@ -9,5 +10,4 @@ extern \"C\" int kevolve_kernel(const kv_args* a) {\n"
      "   for (int64_t r = 0; r < R; ++r) {\n"
      "     float m = x[r * C];\n"
      "-    for (int64_t c = 1; c < C; ++c)\n"
      "-      if (x[r * C + c] > m) m = x[r * C + c];\n"
      "+    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);\n"
      "     double s = 0;\n";
  auto out = apply_unified_diff(kParent, diff);
  REQUIRE(out);
  std::string want = replaced(kParent, "#include <cmath>\n", "#include <algorithm>\n#include <cmath>\n");
  want = replaced(want, "    for (int64_t c = 1; c < C; ++c)\n      if (x[r * C + c] > m) m = x[r * C + c];\n",
                  "    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);\n");
  CHECK(*out == want);
}

TEST_CASE("a hunk whose context appears twice is ambiguous unless its stated line is exactly one of them", "[diff]") {
  const std::string body = "+#pragma omp simd\n     for (int64_t c = 0; c < C; ++c) {\n";
  for (const std::string header : {"@@ ... @@", "@@ -30,1 +30,2 @@"}) {
    INFO(header);
    auto out = apply_unified_diff(kParent, header + "\n" + body, "the parent");
    REQUIRE(!out);
    CHECK(out.error().find("hunk 1 is ambiguous") != std::string::npos);
    CHECK(out.error().find("match 2 places in the parent (lines ") != std::string::npos);
    CHECK(out.error().find("14") != std::string::npos);
    CHECK(out.error().find("19") != std::string::npos);
  }
  // The stated line (19) picks the second loop.
  auto out = apply_unified_diff(kParent, "@@ -19,1 +19,2 @@\n" + body);
  REQUIRE(out);
  CHECK(*out == replaced(kParent, "    const float inv = float(1.0 / s);\n",
                         "    const float inv = float(1.0 / s);\n#pragma omp simd\n"));
}

TEST_CASE("context that is not in the parent fails with the hunk number and the first line not found", "[diff]") {
  const std::string diff =
      "@@ -1,3 +1,4 @@\n"
      " #include \"kevolve_kernel.h\"\n"
      "+#include <algorithm>\n"
      " #include <cmath>\n"
      "@@ -10,3 +11,3 @@\n"
      "-    float m = -INFINITY;\n"
      "+    float m = x[r * C];\n"
      "     for (int64_t c = 1; c < C; ++c)\n";
  auto out = apply_unified_diff(kParent, diff, "the parent");
  REQUIRE(!out);
  CHECK(out.error() == "hunk 2: line 'float m = -INFINITY;' not found in the parent");

  // The first lines match, a later one does not: the message says where the hunk's run stopped.
  const std::string partial =
      "@@ -13,4 +13,4 @@\n"
      "     double s = 0;\n"
      "     for (int64_t c = 0; c < C; ++c) {\n"
      "-      y[r * C + c] = expf(x[r * C + c] - m);\n"
      "+      y[r * C + c] = std::exp(x[r * C + c] - m);\n";
  out = apply_unified_diff(kParent, partial, "the parent");
  REQUIRE(!out);
  CHECK(out.error().find("hunk 1: line 'y[r * C + c] = expf(x[r * C + c] - m);' not found in the parent") == 0);
  CHECK(out.error().find("match from line 13, where line 15 is 'y[r * C + c] = std::exp(x[r * C + c] - m);'") !=
        std::string::npos);
}

TEST_CASE("hunks out of file order fail, saying where the later hunk matched", "[diff]") {
  const std::string diff = "@@ -16,4 +16,4 @@\n" + kInvHunkBody +
                           "@@ -2,2 +2,3 @@\n"
                           " #include \"kevolve_kernel.h\"\n"
                           "+#include <algorithm>\n"
                           " #include <cmath>\n";
  auto out = apply_unified_diff(kParent, diff);
  REQUIRE(!out);
  CHECK(out.error().find("hunk 2: line '#include \"kevolve_kernel.h\"' not found in the original after hunk 1 (it "
                         "matches at line 2") == 0);
}

TEST_CASE("a diff that only adds lines at the end", "[diff]") {
  const std::string added =
      "\n// Rows are independent; the outer loop can run in parallel.\nstatic_assert(sizeof(float) == 4, \"fp32\");\n";
  // With context, with a zero-length range after the last line, and with neither context nor line number.
  for (const std::string diff :
       {"@@ -22,3 +22,6 @@\n   }\n   return 0;\n }\n+\n+// Rows are independent; the outer loop can run in parallel.\n"
        "+static_assert(sizeof(float) == 4, \"fp32\");\n",
        "@@ -24,0 +25,3 @@\n+\n+// Rows are independent; the outer loop can run in "
        "parallel.\n+static_assert(sizeof(float) == 4, \"fp32\");\n",
        "@@\n+\n+// Rows are independent; the outer loop can run in parallel.\n+static_assert(sizeof(float) == 4, "
        "\"fp32\");\n"}) {
    INFO(diff);
    auto out = apply_unified_diff(kParent, diff);
    REQUIRE(out);
    CHECK(*out == kParent + added);
  }
}

TEST_CASE("trailing whitespace, blank context lines without their space, CRLF and the no-newline marker are tolerated",
          "[diff]") {
  std::string parent = replaced(kParent, "  return 0;\n", "  return 0;   \n");  // trailing spaces in the parent
  const std::string diff =
      "--- a/kernel.cpp\r\n"
      "+++ b/kernel.cpp\r\n"
      "@@ -2,4 +2,5 @@\r\n"
      " #include \"kevolve_kernel.h\"  \r\n"  // trailing spaces in the diff
      " #include <cmath>\r\n"
      "\r\n"  // the blank line 4, without its leading space
      "+// Each row: max, exp and sum, scale.\r\n"
      " extern \"C\" int kevolve_kernel(const kv_args* a) {\r\n"
      "@@ -21,4 +22,4 @@\n"
      "   }\n"
      "-  return 0;\n"
      "+  return 0;  // success\n"
      " }\n"
      "\\ No newline at end of file\n"
      "\n";
  auto out = apply_unified_diff(parent, diff);
  REQUIRE(out);
  std::string want = replaced(parent, "\nextern", "\n// Each row: max, exp and sum, scale.\nextern");
  want = replaced(want, "  return 0;   \n", "  return 0;  // success\n");
  CHECK(*out == want);
  // Context keeps the parent's own text (its whitespace); the result ends with a newline as the parent did.
  CHECK(out->find("#include \"kevolve_kernel.h\"\n") != std::string::npos);
  CHECK(out->back() == '\n');
}

TEST_CASE("indentation that differs from the parent is matched when nothing matches exactly", "[diff]") {
  const std::string diff =
      "@@ -18,1 +18,1 @@\n"
      "-\tconst float inv = float(1.0 / s);\n"
      "+    const float inv = 1.0f / float(s);\n";
  auto out = apply_unified_diff(kParent, diff);
  REQUIRE(out);
  CHECK(*out == replaced(kParent, "const float inv = float(1.0 / s);", "const float inv = 1.0f / float(s);"));
}

TEST_CASE("a diff that changes nothing is refused", "[diff]") {
  auto out = apply_unified_diff(kParent, "@@ -2,2 +2,2 @@\n #include \"kevolve_kernel.h\"\n #include <cmath>\n");
  REQUIRE(!out);
  CHECK(out.error().find("changes nothing") != std::string::npos);
  CHECK(!apply_unified_diff(kParent, ""));
}

TEST_CASE("replies: a diff is recognised by its fence or its first line, a full source wins over a diff", "[diff]") {
  CHECK(!extract_code("```diff\n@@\n-a\n+b\n```\n"));
  CHECK(!extract_code("```cpp\n@@ -1,2 +1,2 @@\n-int kevolve_kernel(const kv_args* a) {\n```\n"));
  CHECK(!extract_code("--- a/k.cpp\n+++ b/k.cpp\n@@\n-int kevolve_kernel(\n"));
  auto both = extract_code("```diff\n@@\n-a\n+b\n```\nor in full:\n```cpp\n" + kParent + "```\n");
  REQUIRE(both);
  CHECK(*both == kParent);
}
