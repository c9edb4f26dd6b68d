#include "runtime/operators/reply_code.hpp"

#include <regex>
#include <set>
#include <vector>

namespace kevolve {

namespace {

struct Block {
  std::string lang, body;
  size_t at = 0;
};

// Fenced blocks whose opening and closing fences start a line; an unclosed block (a cut reply) is not one.
std::vector<Block> fenced_blocks(const std::string& s) {
  std::vector<Block> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t open = s.find("```", pos);
    if (open == std::string::npos) break;
    const size_t line = s.rfind('\n', open);
    const size_t line_start = line == std::string::npos ? 0 : line + 1;
    if (s.find_first_not_of(" \t", line_start) != open) {  // ``` inside a line: not a fence
      pos = open + 3;
      continue;
    }
    const size_t eol = s.find('\n', open);
    if (eol == std::string::npos) break;
    size_t close = eol;
    for (;;) {  // the next ``` at the start of a line
      close = s.find("```", close + 1);
      if (close == std::string::npos) break;
      const size_t nl = s.rfind('\n', close);
      if (nl != std::string::npos && s.find_first_not_of(" \t", nl + 1) == close) break;
    }
    if (close == std::string::npos) break;
    std::string lang = s.substr(open + 3, eol - open - 3);
    while (!lang.empty() && (lang.back() == '\r' || lang.back() == ' ')) lang.pop_back();
    out.push_back({lang, s.substr(eol + 1, s.rfind('\n', close) - eol), open});
    pos = close + 3;
  }
  return out;
}

bool is_diff(const std::string& lang, const std::string& body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  const std::string head = first == std::string::npos ? "" : body.substr(first, 16);
  return lang.find("diff") != std::string::npos || lang.find("patch") != std::string::npos ||
         head.rfind("--- ", 0) == 0 || head.rfind("diff --git", 0) == 0 || head.rfind("@@", 0) == 0;
}

const std::regex& main_re() {
  static const std::regex r(R"(\bint\s+main\s*\()");
  return r;
}

// `src` without its `int main(...) { ... }` (brace-matched).
std::string cut_main(const std::string& src) {
  std::smatch m;
  if (!std::regex_search(src, m, main_re())) return src;
  const size_t start = static_cast<size_t>(m.position(0));
  size_t brace = src.find('{', start);
  if (brace == std::string::npos) return src.substr(0, start);
  int depth = 0;
  size_t i = brace;
  for (; i < src.size(); ++i) {
    if (src[i] == '{') ++depth;
    if (src[i] == '}' && --depth == 0) break;
  }
  return src.substr(0, start) + (i < src.size() ? src.substr(i + 1) : "");
}

// A C++ source as tokens: identifiers and numbers, string and character literals (raw strings too) as one
// token each, punctuation one character each; comments dropped; a preprocessor line as one token starting '#'
// (with its continuation lines).
std::vector<std::string> cpp_tokens(const std::string& src) {
  std::vector<std::string> out;
  const size_t n = src.size();
  bool line_start = true;
  for (size_t i = 0; i < n;) {
    const char c = src[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && src[i + 1] == '/') {
      i = src.find('\n', i);
      if (i == std::string::npos) i = n;
      continue;
    }
    if (c == '/' && i + 1 < n && src[i + 1] == '*') {
      const size_t e = src.find("*/", i + 2);
      i = e == std::string::npos ? n : e + 2;
      continue;
    }
    if (c == '#' && line_start) {  // a directive, with its backslash-continued lines
      size_t e = i;
      while ((e = src.find('\n', e)) != std::string::npos && e > 0 && src[e - 1] == '\\') ++e;
      if (e == std::string::npos) e = n;
      out.push_back(src.substr(i, e - i));
      i = e;
      continue;
    }
    line_start = false;
    if (c == 'R' && i + 1 < n && src[i + 1] == '"') {  // R"delim( ... )delim"
      const size_t paren = src.find('(', i + 2);
      if (paren != std::string::npos) {
        const std::string close = ")" + src.substr(i + 2, paren - i - 2) + "\"";
        const size_t e = src.find(close, paren);
        const size_t end = e == std::string::npos ? n : e + close.size();
        out.push_back(src.substr(i, end - i));
        i = end;
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      size_t e = i + 1;
      while (e < n && src[e] != c && src[e] != '\n') e += src[e] == '\\' ? 2 : 1;
      e = std::min(e + 1, n);
      out.push_back(src.substr(i, e - i));
      i = e;
      continue;
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = i;
      while (e < n && (std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_')) ++e;
      out.push_back(src.substr(i, e - i));
      i = e;
      continue;
    }
    out.push_back(std::string(1, c));
    ++i;
  }
  return out;
}

bool is_identifier(const std::string& t) {
  return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_');
}

// The name one namespace-scope declaration (its tokens up to ';' or its body's '{') defines: a type's name, an
// alias, a function's name (the identifier before its parameter list), a variable's (the last identifier
// before '=', '[', '{' or the end). "" when it defines none of those (e.g. `using namespace`, an operator).
std::string declared_name(const std::vector<std::string>& decl) {
  static const std::set<std::string> not_names{
      "if",       "for",      "while",         "switch",  "return",      "sizeof",    "defined",  "static_assert",
      "alignas",  "decltype", "__attribute__", "__declspec", "template", "typename", "const",   "constexpr",
      "static",   "inline",   "extern",        "volatile", "unsigned", "signed",    "long",     "short",
      "int",      "float",    "double",        "char",    "void",        "bool",      "auto",     "operator",
      "__global__", "__device__", "__host__",  "__forceinline__", "__restrict__", "noexcept", "override"};
  std::vector<std::string> d;  // the declaration without attribute groups, whose arguments name nothing
  for (size_t k = 0; k < decl.size(); ++k) {
    const std::string& t = decl[k];
    if ((t == "__attribute__" || t == "alignas" || t == "__declspec") && k + 1 < decl.size() && decl[k + 1] == "(") {
      for (int depth = 0; ++k < decl.size();) {
        depth += decl[k] == "(" ? 1 : decl[k] == ")" ? -1 : 0;
        if (depth == 0) break;
      }
      continue;
    }
    d.push_back(t);
  }
  if (d.empty()) return {};
  if (d[0] == "using") return d.size() > 2 && d[2] == "=" ? d[1] : std::string();
  size_t angle = 0;  // template parameter lists are skipped
  for (size_t k = 0; k < d.size(); ++k) {
    const std::string& t = d[k];
    if (t == "<") ++angle;
    if (t == ">" && angle) --angle;
    if (angle) continue;
    if ((t == "struct" || t == "class" || t == "union" || t == "enum") && k + 1 < d.size()) {
      size_t j = k + 1;
      if (d[j] == "class" || d[j] == "struct") ++j;  // enum class
      if (j < d.size() && is_identifier(d[j]) && !not_names.count(d[j])) return d[j];
    }
    if (t == "operator") return {};
    if (t == "(" || t == "=" || t == "[" || t == "{" || t == ";") {
      for (size_t j = k; j-- > 0;) {
        if (d[j] == "(" || d[j] == ")") break;
        if (is_identifier(d[j]) && !not_names.count(d[j])) return d[j];
        if (d[j] != "*" && d[j] != "&" && d[j] != ":") break;
      }
      return {};
    }
  }
  for (size_t j = d.size(); j-- > 0;)  // `typedef float v8 __attribute__(...)` ends without '=': its last name
    if (is_identifier(d[j]) && !not_names.count(d[j])) return d[j];
  return {};
}

// Names a C++ helper block defines at namespace scope, at any depth of namespaces (named, anonymous, inline) and
// extern "C" blocks: functions, types, macros, aliases, constants. Function bodies, class bodies and
// initialisers are skipped by bracket matching over tokens (comments and literals cannot unbalance them).
std::set<std::string> defined_names(const std::string& src) {
  static const std::regex macro_re(R"(^#\s*define\s+(\w+))");
  std::set<std::string> names;
  const std::vector<std::string> toks = cpp_tokens(src);
  std::vector<bool> scopes;  // for each open '{': whether it opens a namespace-like scope
  std::vector<std::string> decl;
  int parens = 0;
  const auto at_namespace_scope = [&] {
    for (bool ns : scopes)
      if (!ns) return false;
    return true;
  };
  for (const std::string& t : toks) {
    if (t[0] == '#') {
      std::smatch m;
      if (std::regex_search(t, m, macro_re)) names.insert(m[1]);
      continue;
    }
    if (t == "(" || t == "[") ++parens;
    if ((t == ")" || t == "]") && parens) --parens;
    if (parens) {
      decl.push_back(t);
      continue;
    }
    if (t == "{") {
      const bool ns = !decl.empty() && (decl[0] == "namespace" ||
                                        (decl[0] == "inline" && decl.size() > 1 && decl[1] == "namespace") ||
                                        (decl[0] == "extern" && decl.size() == 2 && decl[1][0] == '"'));
      const bool here = at_namespace_scope();
      if (!ns && here) {
        decl.push_back("{");
        if (auto name = declared_name(decl); !name.empty()) names.insert(name);
      }
      scopes.push_back(ns);
      decl.clear();
      continue;
    }
    if (t == "}") {
      if (!scopes.empty()) scopes.pop_back();
      if (at_namespace_scope()) decl.clear();
      continue;
    }
    if (!at_namespace_scope()) continue;
    if (t == ";") {
      decl.push_back(";");
      if (auto name = declared_name(decl); !name.empty()) names.insert(name);
      decl.clear();
      continue;
    }
    decl.push_back(t);
  }
  return names;
}

bool uses_word(const std::string& src, const std::string& w) {
  for (size_t p = src.find(w); p != std::string::npos; p = src.find(w, p + 1)) {
    const bool left = p == 0 || !(std::isalnum(static_cast<unsigned char>(src[p - 1])) || src[p - 1] == '_');
    const size_t e = p + w.size();
    const bool right = e >= src.size() || !(std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_');
    if (left && right) return true;
  }
  return false;
}

// The entry block with the helpers placed after its leading #include / #pragma lines and comments.
std::string join_helpers(const std::string& entry, const std::vector<std::string>& helpers) {
  size_t head = 0;
  for (size_t pos = 0; pos < entry.size();) {
    size_t eol = entry.find('\n', pos);
    if (eol == std::string::npos) eol = entry.size();
    const std::string line = entry.substr(pos, eol - pos);
    const size_t f = line.find_first_not_of(" \t\r");
    if (f != std::string::npos && line[f] != '#' && line.compare(f, 2, "//") != 0) break;
    head = pos = eol + 1;
  }
  head = std::min(head, entry.size());
  std::string out = entry.substr(0, head);
  for (auto& h : helpers) out += h + (h.empty() || h.back() == '\n' ? "" : "\n") + "\n";
  return out + entry.substr(head);
}

bool cpp_like(const std::string& lang) {
  return lang.empty() || lang == "cpp" || lang == "c++" || lang == "cxx" || lang == "c" || lang == "cuda" ||
         lang == "cu" || lang == "h" || lang == "hpp";
}

}  // namespace

bool defines_entry(const std::string& s) {
  static const std::regex entry(R"(\bkevolve_kernel\s*\(\s*(?:const\s+)?kv_\w+)");
  return std::regex_search(s, entry) || s.find("@kevolve kernel") != std::string::npos ||
         s.find("class ModelNew") != std::string::npos;
}

std::string strip_thinking(const std::string& reply) {
  std::string s = reply;
  for (const char* tag : {"think", "thinking", "reasoning"}) {
    const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
    // A reply whose opening tag the server removed: everything before the first closing tag is reasoning.
    const size_t c0 = s.find(close), o0 = s.find(open);
    if (c0 != std::string::npos && (o0 == std::string::npos || o0 > c0)) s.erase(0, c0 + close.size());
    for (size_t o; (o = s.find(open)) != std::string::npos;) {
      const size_t c = s.find(close, o);
      if (c == std::string::npos) {  // never closed (a cut reply): nothing after it is the answer
        s.erase(o);
        break;
      }
      s.erase(o, c + close.size() - o);
    }
  }
  return s;
}

ReplyCode read_reply(const std::string& raw) {
  ReplyCode r;
  const std::string reply = strip_thinking(raw);
  const auto blocks = fenced_blocks(reply);
  // A fence that opens a line makes the reply fenced even when no block closes (a cut reply): its text is
  // then never taken as bare code.
  r.fenced = !blocks.empty() || reply.rfind("```", 0) == 0 || reply.find("\n```") != std::string::npos;
  int entry = -1;
  size_t diff_at = 0, entry_at = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (is_diff(b.lang, b.body)) {
      r.diff = b.body;
      diff_at = b.at + 1;
    } else if (defines_entry(b.body)) {
      entry = static_cast<int>(i);
      entry_at = b.at + 1;
    }
  }
  if (!r.fenced) {
    if (is_diff("", reply))
      r.diff = reply;
    else if (defines_entry(reply))
      r.code = cut_main(reply);
    r.diff_final = !r.diff.empty();
    return r;
  }
  r.diff_final = !r.diff.empty() && diff_at > entry_at;
  if (entry < 0) return r;
  const Block& e = blocks[static_cast<size_t>(entry)];
  const std::string body = cut_main(e.body);
  if (!cpp_like(e.lang) || e.body.find("class ModelNew") != std::string::npos) {
    r.code = body;
    return r;
  }
  // Helper blocks: C++ blocks before the entry's, without their own entry point, test main() or diff, that
  // define a name the entry block uses but does not define itself.
  const std::set<std::string> own = defined_names(body);
  std::vector<std::string> helpers;
  for (int i = 0; i < entry; ++i) {
    const Block& b = blocks[static_cast<size_t>(i)];
    if (!cpp_like(b.lang) || is_diff(b.lang, b.body) || defines_entry(b.body) || std::regex_search(b.body, main_re()))
      continue;
    for (auto& n : defined_names(b.body))
      if (!own.count(n) && uses_word(body, n)) {
        helpers.push_back(b.body);
        break;
      }
  }
  r.helpers = static_cast<int>(helpers.size());
  r.code = helpers.empty() ? body : join_helpers(body, helpers);
  return r;
}

}  // namespace kevolve
