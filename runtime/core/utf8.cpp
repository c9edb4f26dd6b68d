#include "runtime/core/utf8.hpp"

#include <cstdint>

namespace kevolve::utf8 {

size_t sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // U+D800..U+DFFF, surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

bool valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = sequence_length(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

std::string repair(std::string_view s, size_t* replaced) {
  std::string out;
  out.reserve(s.size());
  size_t bad = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = sequence_length(s, i);
    if (n) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++bad;
      ++i;
    }
  }
  if (replaced) *replaced = bad;
  return out;
}

namespace {

// The code unit of a \uXXXX escape starting at json[i] (the backslash), or -1 when it is not one.
int escape_unit(const std::string& json, size_t i) {
  if (i + 6 > json.size() || json[i] != '\\' || json[i + 1] != 'u') return -1;
  int v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    const char c = json[k];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

size_t repair_json_surrogates(std::string& json) {
  size_t fixed = 0;
  for (size_t i = 0; i + 1 < json.size(); ++i) {
    if (json[i] != '\\') continue;
    const int u = escape_unit(json, i);
    if (u < 0) {
      ++i;  // an escape of another kind (\\, \", \n...): its second character is not a backslash that starts one
      continue;
    }
    const bool high = u >= 0xD800 && u <= 0xDBFF, low = u >= 0xDC00 && u <= 0xDFFF;
    if (high) {
      const int next = escape_unit(json, i + 6);
      if (next >= 0xDC00 && next <= 0xDFFF) {  // a whole pair: keep both halves
        i += 11;
        continue;
      }
    }
    if (high || low) {
      json.replace(i + 2, 4, "FFFD");
      ++fixed;
    }
    i += 5;
  }
  return fixed;
}

std::string base64(std::string_view s) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((s.size() + 2) / 3 * 4);
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<uint8_t>(s[i + 1]) << 8;
    if (i + 2 < s.size()) v |= static_cast<uint8_t>(s[i + 2]);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += i + 1 < s.size() ? a[(v >> 6) & 63] : '=';
    out += i + 2 < s.size() ? a[v & 63] : '=';
  }
  return out;
}

}  // namespace kevolve::utf8
