#include "backends/harness/source_scan.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <vector>

namespace kevolve::harness {
namespace {

const std::map<std::string, std::string>& forbidden() {
  static const std::map<std::string, std::string> m = {
      {"fork", "starting processes"},
      {"vfork", "starting processes"},
      {"clone", "starting processes"},
      {"execl", "running programs"},
      {"execlp", "running programs"},
      {"execle", "running programs"},
      {"execv", "running programs"},
      {"execvp", "running programs"},
      {"execvpe", "running programs"},
      {"execve", "running programs"},
      {"fexecve", "running programs"},
      {"system", "running programs"},
      {"popen", "running programs"},
      {"posix_spawn", "running programs"},
      {"posix_spawnp", "running programs"},
      {"dlopen", "loading code"},
      {"dlmopen", "loading code"},
      {"dlsym", "looking up foreign code"},
      {"dlvsym", "looking up foreign code"},
      {"syscall", "raw system calls"},
      {"asm", "inline assembly"},
      {"__asm__", "inline assembly"},
      {"__asm", "inline assembly"},
      {"socket", "network access"},
      {"connect", "network access"},
      {"ptrace", "inspecting processes"},
      {"mprotect", "changing memory protection"},
      {"torch", "calling the reference (torch)"},
      {"ATen", "calling the reference (ATen)"},
      {"c10", "calling the reference (c10)"},
      {"Python", "calling into Python"},
  };
  return m;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier or number that ends just before `i` in `s` ("" when none).
std::string word_before(const std::string& s, size_t i) {
  size_t b = i;
  while (b > 0 && ident_char(s[b - 1])) --b;
  return s.substr(b, i - b);
}

// Replaces comments and the contents of string/char literals (raw strings too) with spaces, keeping
// newlines. A quote inside a number (1'000, a digit separator) starts no literal.
std::string strip(const std::string& s) {
  std::string out = s;
  enum { code, line_comment, block_comment, str, chr } st = code;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (st) {
      case code:
        if (c == '"' && i > 0 && s[i - 1] == 'R') {
          const std::string prefix = word_before(s, i);
          if (prefix == "R" || prefix == "uR" || prefix == "UR" || prefix == "LR" || prefix == "u8R") {
            // R"delim( ... )delim": everything up to the closing sequence is the literal's.
            const size_t open = s.find('(', i + 1);
            if (open != std::string::npos && open - i - 1 <= 16) {
              std::string close(1, ')');
              close.append(s, i + 1, open - i - 1);
              close += '"';
              size_t end = s.find(close, open + 1);
              end = end == std::string::npos ? s.size() : end + close.size();
              for (size_t k = i + 1; k + 1 < end; ++k)
                if (out[k] != '\n') out[k] = ' ';
              i = end - 1;
              break;
            }
          }
        }
        if (c == '\'' && i > 0 && ident_char(s[i - 1])) {
          const std::string w = word_before(s, i);
          if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) break;  // 1'000
        }
        if (c == '/' && n == '/') {
          st = line_comment;
          out[i] = ' ';
        } else if (c == '/' && n == '*') {
          st = block_comment;
          out[i] = ' ';
        } else if (c == '"')
          st = str;
        else if (c == '\'')
          st = chr;
        break;
      case line_comment:
        if (c == '\n')
          st = code;
        else
          out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && n == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          st = code;
        } else if (c != '\n')
          out[i] = ' ';
        break;
      case str:
      case chr:
        if (c == '\\') {
          out[i] = ' ';
          if (i + 1 < s.size() && s[i + 1] != '\n') out[++i] = ' ';
        } else if ((st == str && c == '"') || (st == chr && c == '\''))
          st = code;
        else if (c != '\n')
          out[i] = ' ';
        break;
    }
  }
  return out;
}

// A `#line` or GNU line-marker directive (`# 12 "file" 3`), also spelled with `%:` or `??=`, with
// comments and line continuations anywhere in it: it would relabel the candidate's lines.
std::optional<ScanFinding> line_directive(const std::string& stripped) {
  std::string joined;  // continuations removed; line_of[k]: the line of joined[k]
  std::vector<int> line_of;
  int line = 1;
  for (size_t i = 0; i < stripped.size(); ++i) {
    if (stripped[i] == '\\') {
      size_t j = i + 1;
      while (j < stripped.size() && (stripped[j] == ' ' || stripped[j] == '\t' || stripped[j] == '\r')) ++j;
      if (j < stripped.size() && stripped[j] == '\n') {
        ++line;
        i = j;
        continue;
      }
    }
    joined += stripped[i];
    line_of.push_back(line);
    if (stripped[i] == '\n') ++line;
  }
  size_t at = 0;
  while (at < joined.size()) {
    size_t end = joined.find('\n', at);
    if (end == std::string::npos) end = joined.size();
    size_t k = joined.find_first_not_of(" \t\r\f\v", at);
    const int here = k < line_of.size() ? line_of[k] : line;
    bool hash = false;
    if (k < end && joined[k] == '#') hash = true, ++k;
    else if (k + 1 < end && joined.compare(k, 2, "%:") == 0) hash = true, k += 2;
    else if (k + 2 < end && joined.compare(k, 3, "?\?=") == 0) hash = true, k += 3;
    if (hash) {
      k = joined.find_first_not_of(" \t\r\f\v", k);
      if (k < end && (std::isdigit(static_cast<unsigned char>(joined[k])) ||
                      (joined.compare(k, 4, "line") == 0 && (k + 4 >= end || !ident_char(joined[k + 4])))))
        return ScanFinding{here, "#line", "relabelling lines as another file's"};
    }
    at = end + 1;
  }
  return std::nullopt;
}

// A file of the toolchain (a system header): under /usr or /opt once links are resolved, or the
// preprocessor's own pseudo files.
bool toolchain_file(const std::string& name, std::map<std::string, bool>& seen) {
  if (name == "<built-in>" || name == "<command-line>") return true;
  auto it = seen.find(name);
  if (it != seen.end()) return it->second;
  std::error_code ec;
  std::string p = std::filesystem::weakly_canonical(std::filesystem::path(name), ec).string();
  if (ec) p = std::filesystem::path(name).lexically_normal().string();
  const bool t = p.rfind("/usr/", 0) == 0 || p.rfind("/opt/", 0) == 0;
  return seen[name] = t;
}

}  // namespace

std::string own_lines(const std::string& text) {
  std::vector<std::string> lines(1);
  std::map<std::string, bool> seen;
  bool own = true;
  size_t next = 1;  // the line number in its file of the next text line
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(at, end - at);
    at = end + 1;
    // A marker: # <line> "<file>" [flags]
    if (l.size() > 3 && l[0] == '#' && l[1] == ' ' && std::isdigit(static_cast<unsigned char>(l[2]))) {
      size_t q = l.find('"');
      size_t e = q == std::string::npos ? q : q + 1;
      std::string name;
      while (e != std::string::npos && e < l.size() && l[e] != '"') {
        if (l[e] == '\\' && e + 1 < l.size()) ++e;
        name += l[e++];
      }
      if (q != std::string::npos) {
        next = std::strtoul(l.c_str() + 2, nullptr, 10);
        own = !toolchain_file(name, seen);
        continue;
      }
    }
    if (own && next > 0 && next < (size_t{1} << 24)) {
      if (lines.size() <= next) lines.resize(next + 1);
      if (!lines[next].empty()) lines[next] += ' ';
      lines[next] += l;
    }
    ++next;
  }
  std::string out;
  for (size_t i = 1; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

std::optional<ScanFinding> scan_preprocessed(const std::string& text, const std::map<std::string, std::string>& table) {
  return scan_tokens(own_lines(text), table);
}

std::optional<ScanFinding> scan_preprocessed_source(const std::string& text) {
  return scan_preprocessed(text, forbidden());
}

std::optional<ScanFinding> scan_source(const std::string& source) { return scan_tokens(source, forbidden()); }

std::optional<ScanFinding> scan_tokens(const std::string& source, const std::map<std::string, std::string>& table) {
  const std::string s = strip(source);
  if (auto d = line_directive(s)) return d;
  int line = 1;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      const std::string tok = s.substr(i, j - i);
      auto it = table.find(tok);
      if (it != table.end()) return ScanFinding{line, tok, it->second};
      i = j;
      continue;
    }
    // include paths: <torch/...>, <ATen/...>, "Python.h" are in angle brackets (not stripped) or strings
    ++i;
  }
  // Includes in quotes were blanked above; check the raw #include lines.
  line = 1;
  size_t start = 0;
  while (start <= source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    const std::string l = source.substr(start, end - start);
    const auto h = l.find_first_not_of(" \t");
    if (h != std::string::npos && l[h] == '#' && l.find("include") != std::string::npos)
      for (const char* bad : {"torch", "ATen", "c10", "Python"})
        if (l.find(bad) != std::string::npos) return ScanFinding{line, bad, "calling the reference or Python"};
    ++line;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace kevolve::harness
