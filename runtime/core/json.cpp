#include "runtime/core/json.hpp"

#include <cmath>
#include <cstdio>

#include "runtime/core/utf8.hpp"

namespace kevolve::json {

std::string quote(const std::string& raw) {
  // JSON text is UTF-8: bytes that are not (a reply cut mid-character, a binary file) become U+FFFD.
  const std::string s = utf8::valid(raw) ? raw : utf8::repair(raw);
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      case '\r':
        o += "\\r";
        break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace kevolve::json
