// Static scan of candidate C/C++ source for constructs no kernel needs and cheaters do: starting
// processes, loading code, raw system calls, inline assembly, sockets, or reaching for torch (the
// reference). Part of the `isolation` detector, together with the runner's seccomp sandbox.
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

}  // namespace kevolve::harness
