// The kevolve binary as a user meets it: exit codes, messages on bad input, --json keys.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace {

struct Run {
  int code;
  std::string out;
};

Run kevolve(const std::string& args) {
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

const std::string src = KEVOLVE_SOURCE_DIR;

}  // namespace

TEST_CASE("kevolve without a subcommand or with a bad one fails with usage", "[cli]") {
  auto none = kevolve("");
  CHECK(none.code == 2);
  CHECK(none.out.find("A subcommand is required") != std::string::npos);
  CHECK(none.out.find("--help") != std::string::npos);
  auto bad = kevolve("frobnicate");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--help") != std::string::npos);
  auto help = kevolve("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("eval") != std::string::npos);
}

TEST_CASE("kevolve eval names an unknown problem and a bad spec", "[cli]") {
  auto r = kevolve("eval --problems " + src + "/problems --problem nope --candidate " + src +
                   "/problems/core/gelu/naive.cpp");
  CHECK(r.code == 2);
  CHECK(r.out.find("no problem named 'nope'") != std::string::npos);
  r = kevolve("eval --problem " + src + "/problems/core/gelu/problem.toml --candidate /no/such/file.cpp");
  CHECK(r.code == 2);
  CHECK(r.out.find("--candidate") != std::string::npos);  // names the option and the file
  CHECK(r.out.find("/no/such/file.cpp") != std::string::npos);
  r = kevolve("eval --problem gelu --problems " + src + "/problems --candidate " + src +
              "/problems/core/gelu/naive.cpp --detector-off everything");
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown detector 'everything'") != std::string::npos);
}

TEST_CASE("kevolve eval --json prints one object with the documented keys", "[cli]") {
  auto r = kevolve("eval --json --min-time 0.01 --min-reps 3 --problem " + src +
                   "/tests/fixtures/problems/softmax_small/problem.toml --candidate " + src +
                   "/problems/core/softmax_rows/naive.cpp");
  INFO(r.out);
  CHECK(r.code == 0);
  for (const char* key : {"\"status\":\"ok\"", "\"speedup\":", "\"max_abs_err\":", "\"reference_ms\":",
                          "\"candidate_ms\":", "\"message\":", "\"reference_threads\":", "\"candidate_threads\":",
                          "\"sandbox\":\""})
    CHECK(r.out.find(key) != std::string::npos);
  CHECK(r.out.find("\"sandbox\":\"\"") == std::string::npos);  // the confinement in force is named
  CHECK(r.out.front() == '{');
}

TEST_CASE("kevolve eval exits 0 on a candidate that fails, and says why", "[cli]") {
  auto r = kevolve("eval --problem " + src + "/tests/fixtures/problems/softmax_small/problem.toml --candidate " + src +
                   "/tests/backends/cpu/crashers/segfault.cpp");
  CHECK(r.code == 0);
  CHECK(r.out.find("runtime_error") != std::string::npos);
  CHECK(r.out.find("signal 11") != std::string::npos);  // says why: the signal, by number and name
}
