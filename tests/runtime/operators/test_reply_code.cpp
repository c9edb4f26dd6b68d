// Which code a reply proposes, for every reply shape the providers give: reasoning sections, helper blocks
// before the kernel, a test main() after it, a final diff after a full-source draft, a cut reply.
#include <catch2/catch.hpp>

#include "runtime/operators/llm_operator.hpp"
#include "runtime/operators/reply_code.hpp"

using namespace kevolve;

namespace {

const std::string kKernel =
    "#include \"kevolve_kernel.h\"\n#include <cmath>\n\nextern \"C\" int kevolve_kernel(const kv_args* a) {\n"
    "  float* y = static_cast<float*>(a->outputs[0].data);\n  y[0] = fast_exp(1.f);\n  return 0;\n}\n";
const std::string kHelper = "static inline float fast_exp(float x) {\n  return std::exp(x);\n}\n";

}  // namespace

TEST_CASE("a helper block before the kernel block is joined to it, after the kernel's includes", "[reply]") {
  const std::string reply =
      "First a helper:\n```cpp\n" + kHelper + "```\nThen the kernel:\n```cpp\n" + kKernel + "```\n";
  const ReplyCode r = read_reply(reply);
  CHECK(r.helpers == 1);
  const size_t head = kKernel.find("extern");  // the includes and the blank line after them
  CHECK(r.code == kKernel.substr(0, head) + kHelper + "\n" + kKernel.substr(head));
  CHECK(r.code.find("fast_exp(float x)") < r.code.find("extern \"C\""));
  // A block the kernel does not use is left out.
  const ReplyCode unused = read_reply("```cpp\nstatic int unrelated_helper(int);\n```\n```cpp\n" + kKernel + "```\n");
  CHECK(unused.helpers == 0);
  CHECK(unused.code == kKernel);
}

TEST_CASE("a test program with main() after the kernel is dropped and a main() inside the kernel's block is cut",
          "[reply]") {
  const std::string harness =
      "#include <cstdio>\nint main() {\n  kv_args a{};\n  kevolve_kernel(&a);\n  std::puts(\"ok\");\n}\n";
  CHECK(read_reply("```cpp\n" + kKernel + "```\nTest it with:\n```cpp\n" + harness + "```\n").code == kKernel);
  auto code =
      extract_code("```cpp\n" + kKernel + "\nint main() {\n  kv_args a{};\n  return kevolve_kernel(&a);\n}\n```");
  REQUIRE(code);
  CHECK(code->find("int main") == std::string::npos);
  CHECK(code->find("extern \"C\" int kevolve_kernel(const kv_args* a)") != std::string::npos);
}

TEST_CASE("reasoning is removed: <think> sections, an unclosed one, a closing tag without its opening", "[reply]") {
  const std::string draft = "```cpp\n// draft\nextern \"C\" int kevolve_kernel(const kv_args* a) { return 1; }\n```";
  CHECK(read_reply("<think>\n" + draft + "\n</think>\n```cpp\n" + kKernel + "```").code == kKernel);
  // Cut inside the reasoning: its draft is never taken.
  CHECK(read_reply("<think>\nLet me try:\n" + draft + "\nhmm, but").code.empty());
  CHECK_FALSE(extract_code("<think>\n" + draft + "\nhmm"));
  CHECK(read_reply("reasoning without its opening tag " + draft + "</think>\nNo code after all.").code.empty());
  CHECK(strip_thinking("<thinking>x</thinking>answer") == "answer");
}

TEST_CASE("a final diff beats an earlier full-source draft and a full source after a diff wins", "[reply]") {
  const std::string diff = "```diff\n@@ -1,1 +1,1 @@\n-// a\n+// b\n```\n";
  const ReplyCode r = read_reply("Draft:\n```cpp\n" + kKernel + "```\nAs a diff instead:\n" + diff);
  CHECK(r.diff_final);
  CHECK_FALSE(r.diff.empty());
  CHECK_FALSE(extract_code("Draft:\n```cpp\n" + kKernel + "```\nAs a diff instead:\n" + diff));
  const ReplyCode later = read_reply(diff + "Or the whole file:\n```cpp\n" + kKernel + "```\n");
  CHECK_FALSE(later.diff_final);
  CHECK(later.code == kKernel);
}

TEST_CASE("a call of kevolve_kernel does not define it and a cut block is no block", "[reply]") {
  CHECK_FALSE(defines_entry("int main() { kevolve_kernel(&a); }"));
  CHECK(defines_entry("extern \"C\" int kevolve_kernel(const kv_args* a) {"));
  CHECK(defines_entry("// @kevolve kernel softmax\n"));
  CHECK(defines_entry("class ModelNew(nn.Module):"));
  CHECK(read_reply("```cpp\n" + kKernel).code.empty());  // no closing fence: the reply was cut
}

TEST_CASE("helpers are found at any namespace depth and braces in comments or strings do not hide them",
          "[reply]") {
  // The style of problems/core/*/fast.cpp: helpers in an anonymous namespace, and a vector type made by a typedef.
  const std::string anon =
      "#include <immintrin.h>\nnamespace {\n// a '}' in a comment: }\ninline __m256 vexp(__m256 x) {\n"
      "  const char* s = \"}}\";\n  (void)s;\n  return x;\n}\n}  // namespace\n";
  const std::string nested =
      "namespace kv {\ninline namespace detail {\ntemplate <int N>\n__attribute__((always_inline)) inline float "
      "hsum(const float* p) { float s = 0; for (int i = 0; i < N; ++i) s += p[i]; return s; }\n"
      "constexpr int kLanes[] = {8, 16};\nstruct Tile { float v[8]; };\n}\n}\n";
  const std::string typedefs = "typedef float v8sf __attribute__((vector_size(32)));\n";
  const std::string kernel =
      "#include \"kevolve_kernel.h\"\n\nextern \"C\" int kevolve_kernel(const kv_args* a) {\n"
      "  __m256 x = vexp(_mm256_setzero_ps());\n  v8sf y{};\n  kv::Tile t{};\n"
      "  return (int)kv::hsum<kv::kLanes[0]>(t.v) + (int)y[0] + (int)x[0];\n}\n";
  const std::string reply = "Helpers:\n```cpp\n" + anon + "```\n```cpp\n" + nested + "```\n```cpp\n" + typedefs +
                            "```\nThe kernel:\n```cpp\n" + kernel + "```\n";
  const ReplyCode r = read_reply(reply);
  CHECK(r.helpers == 3);
  CHECK(r.code.find("inline __m256 vexp") != std::string::npos);
  CHECK(r.code.find("hsum(const float* p)") != std::string::npos);
  CHECK(r.code.find("typedef float v8sf") != std::string::npos);
  CHECK(r.code.find("inline __m256 vexp") < r.code.find("extern \"C\""));
  // Names defined only inside a function body or a class are not the block's: such a block is not joined.
  const std::string local_only =
      "static int unrelated(int) {\n  auto vexp = [](float x) { return x; };\n  return (int)vexp(1.f);\n}\n"
      "struct Holder { float hsum(); };\n";
  const ReplyCode none = read_reply("```cpp\n" + local_only + "```\n```cpp\n" + kernel + "```\n");
  CHECK(none.helpers == 0);
}
