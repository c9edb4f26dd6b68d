// Static scan of candidate C/C++ source for constructs no kernel needs and cheaters do: starting
// processes, loading code, raw system calls, inline assembly, sockets, or reaching for torch (the
// reference). Part of the `isolation` detector. The scan is advice, for a clear verdict and a clear
// lesson; the wall is the sandbox (the confined build, the runner's uid, namespaces and seccomp filter):
// a word the scan misses gains nothing the sandbox allows.
// Two passes: the raw text, and the preprocessor's output (`cc -E`), where words assembled by macros
// (`CAT(as,m)`) appear whole. Line directives (`#line`, `# 12 "file"`) are refused in the raw text: they
// would relabel the candidate's lines as a system header's in the second pass.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace kevolve::harness {

struct ScanFinding {
  int line = 0;
  std::string construct;  // the token found, e.g. "popen"
  std::string why;        // what it would allow
};

// First forbidden construct in `source` (comments and string literals are ignored), or nullopt.
std::optional<ScanFinding> scan_source(const std::string& source);
// The same scan with another table of forbidden tokens (token -> what it would allow); #include lines
// naming torch, ATen, c10 or Python are always refused.
std::optional<ScanFinding> scan_tokens(const std::string& source, const std::map<std::string, std::string>& table);

// The scan of preprocessed text (with its `# <line> "<file>"` markers): only the lines that come from
// files outside the toolchain (/usr, /opt: the system headers) are scanned — the candidate's own and the
// ABI header — each at its line in its file. `scan_preprocessed_source` uses scan_source's table.
std::optional<ScanFinding> scan_preprocessed(const std::string& text, const std::map<std::string, std::string>& table);
std::optional<ScanFinding> scan_preprocessed_source(const std::string& text);
// The part of `text` that scan_preprocessed looks at: the lines from files outside the toolchain, each
// placed at its line number (the rest blank); for tests and messages.
std::string own_lines(const std::string& text);

}  // namespace kevolve::harness
