#include "backends/harness/source_scan.hpp"

#include <cctype>
#include <map>

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

// Replaces comments and the contents of string/char literals with spaces, keeping newlines.
std::string strip(const std::string& s) {
  std::string out = s;
  enum { code, line_comment, block_comment, str, chr } st = code;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (st) {
      case code:
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

}  // namespace

std::optional<ScanFinding> scan_source(const std::string& source) { return scan_tokens(source, forbidden()); }

std::optional<ScanFinding> scan_tokens(const std::string& source, const std::map<std::string, std::string>& table) {
  const std::string s = strip(source);
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
