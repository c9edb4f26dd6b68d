// Running a command line from a test: the shell's standard output (add " 2>&1" for stderr too) and the
// exit code (-1 when it did not exit normally).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kevolve::test {

struct ShellResult {
  int code = -1;
  std::string out;
};

inline ShellResult shell(const std::string& cmd) {
  ShellResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace kevolve::test
