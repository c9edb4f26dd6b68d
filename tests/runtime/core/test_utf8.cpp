// UTF-8 checking and repair, and JSON strings that stay valid whatever bytes they carry.
#include <catch2/catch.hpp>

#include <simdjson.h>

#include "runtime/core/json.hpp"
#include "runtime/core/utf8.hpp"

using namespace kevolve;

TEST_CASE("utf8: valid text is kept and each bad byte becomes one U+FFFD where it lies", "[utf8]") {
  const std::string good = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 x";
  CHECK(utf8::valid(good));
  CHECK(utf8::repair(good) == good);
  size_t n = 0;
  CHECK(utf8::repair("a\xFF" "b", &n) == "a\xEF\xBF\xBD" "b");
  CHECK(n == 1);
  CHECK(utf8::repair("x\xE2\x82", &n) == "x\xEF\xBF\xBD\xEF\xBF\xBD");  // a sequence cut at the end
  CHECK(n == 2);
  CHECK_FALSE(utf8::valid("\xED\xA0\x80"));  // an encoded surrogate
  CHECK_FALSE(utf8::valid("\xC0\xAF"));      // overlong '/'
  CHECK_FALSE(utf8::valid("\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST_CASE("utf8: lone surrogate escapes in JSON become U+FFFD and pairs and escaped backslashes stay", "[utf8]") {
  std::string j = R"({"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\udc00"})";
  CHECK(utf8::repair_json_surrogates(j) == 2);
  CHECK(j == R"({"a":"x\uFFFDy","b":"\ud83d\ude00","c":"\\ud800","d":"\uFFFD"})");
  simdjson::dom::parser p;
  simdjson::dom::element e;
  CHECK_FALSE(p.parse(j).get(e));
}

TEST_CASE("utf8: json quote writes valid JSON for any bytes and base64 encodes bytes", "[utf8]") {
  const std::string q = json::quote(std::string("ok\xFF\x00tail", 8));
  CHECK(utf8::valid(q));
  simdjson::dom::parser p;
  simdjson::dom::element e;
  REQUIRE_FALSE(p.parse(q).get(e));
  std::string_view sv;
  REQUIRE_FALSE(e.get(sv));
  CHECK(sv == std::string_view("ok\xEF\xBF\xBD\0tail", 10));
  CHECK(utf8::base64("") == "");
  CHECK(utf8::base64("f") == "Zg==");
  CHECK(utf8::base64("fo") == "Zm8=");
  CHECK(utf8::base64("foobar") == "Zm9vYmFy");
}
