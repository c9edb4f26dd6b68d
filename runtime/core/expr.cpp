#include "runtime/core/expr.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cmath>

namespace kevolve {
namespace {

struct Parser {
  const std::string& s;
  const std::map<std::string, int64_t>& sym;
  std::string& err;
  size_t i = 0;

  void skip() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool fail(const std::string& m) {
    if (err.empty()) err = m;
    return false;
  }

  bool primary(double& v) {
    skip();
    if (i >= s.size()) return fail("unexpected end of expression");
    const char c = s[i];
    if (c == '(') {
      ++i;
      if (!sum(v)) return false;
      skip();
      if (i >= s.size() || s[i] != ')') return fail("missing ')'");
      ++i;
      return true;
    }
    if (c == '-') {
      ++i;
      if (!primary(v)) return false;
      v = -v;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* start = s.c_str() + i;  // strtod, not stod: "." and "1e999" are errors here, not exceptions
      char* end = nullptr;
      errno = 0;
      v = std::strtod(start, &end);
      if (end == start) return fail("expected a number at '" + s.substr(i, 20) + "'");
      if (errno == ERANGE && std::isinf(v))
        return fail("number out of range: '" + std::string(start, static_cast<const char*>(end)) + "'");
      i += static_cast<size_t>(end - start);
      return true;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      const std::string name = s.substr(i, j - i);
      size_t k = j;
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k < s.size() && s[k] == '(') return call(name, k + 1, v);
      auto it = sym.find(name);
      if (it == sym.end()) return fail("unknown symbol '" + name + "'");
      v = static_cast<double>(it->second);
      i = j;
      return true;
    }
    return fail(std::string("unexpected character '") + c + "'");
  }
  // name(a, b) for the two-argument functions cdiv (rounds up), min and max; `at` is past the '('.
  bool call(const std::string& name, size_t at, double& v) {
    if (name != "cdiv" && name != "min" && name != "max")
      return fail("unknown function '" + name + "' (expected cdiv, min or max)");
    i = at;
    double a, b;
    if (!sum(a)) return false;
    skip();
    if (i >= s.size() || s[i] != ',') return fail(name + " takes two arguments");
    ++i;
    if (!sum(b)) return false;
    skip();
    if (i >= s.size() || s[i] != ')') return fail("missing ')' after the arguments of " + name);
    ++i;
    if (name == "cdiv") {
      if (b == 0) return fail("division by zero");
      v = std::ceil(a / b);
    } else {
      v = name == "min" ? std::min(a, b) : std::max(a, b);
    }
    return true;
  }
  bool product(double& v) {
    if (!primary(v)) return false;
    for (;;) {
      skip();
      if (i >= s.size() || (s[i] != '*' && s[i] != '/')) return true;
      const char op = s[i++];
      double r;
      if (!primary(r)) return false;
      if (op == '/' && r == 0) return fail("division by zero");
      v = op == '*' ? v * r : v / r;
    }
  }
  bool sum(double& v) {
    if (!product(v)) return false;
    for (;;) {
      skip();
      if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return true;
      const char op = s[i++];
      double r;
      if (!product(r)) return false;
      v = op == '+' ? v + r : v - r;
    }
  }
};

}  // namespace

std::optional<double> eval_expr(const std::string& text, const std::map<std::string, int64_t>& symbols,
                                std::string& error) {
  error.clear();
  Parser p{text, symbols, error};
  double v = 0;
  if (!p.sum(v)) return std::nullopt;
  p.skip();
  if (p.i != text.size()) {
    error = "unexpected '" + text.substr(p.i) + "'";
    return std::nullopt;
  }
  return v;
}

bool is_symbol(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::set<std::string> symbols_of(const std::string& text) {
  std::set<std::string> out;
  auto word = [&](size_t i) { return std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'; };
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {  // a number, exponent included
      while (i < text.size() && (word(i) || text[i] == '.')) ++i;
      continue;
    }
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && word(j)) ++j;
    size_t k = j;
    while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
    if (k >= text.size() || text[k] != '(') out.insert(text.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace kevolve
