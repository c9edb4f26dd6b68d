#include <catch2/catch.hpp>

#include "backends/harness/source_scan.hpp"

using kevolve::harness::scan_source;

TEST_CASE("the source scan flags process creation, code loading and torch", "[scan]") {
  auto f = scan_source("#include <cstdio>\nint k() {\n  return popen(\"python3\", \"r\") != 0;\n}\n");
  REQUIRE(f);
  CHECK(f->construct == "popen");
  CHECK(f->line == 3);
  CHECK(scan_source("void* h = dlopen(\"libtorch_cpu.so\", 2);"));
  CHECK(scan_source("#include <ATen/ATen.h>\n"));
  CHECK(scan_source("#include \"torch/torch.h\"\n"));
  CHECK(scan_source("int f(){ asm volatile(\"nop\"); return 0; }"));
  CHECK(scan_source("long r = syscall(39);"));
}

TEST_CASE("the source scan ignores comments, strings and ordinary kernels", "[scan]") {
  CHECK_FALSE(scan_source("// we never fork or popen here\n/* system */ int f() { return 0; }"));
  CHECK_FALSE(scan_source("const char* s = \"fork\";"));
  CHECK_FALSE(scan_source("#include <thread>\n#include <omp.h>\nvoid f(){ std::thread t([]{}); t.join(); }"));
  CHECK_FALSE(scan_source("int forks = 0; int system_size = 3;"));  // whole tokens only
}

TEST_CASE("the source scan refuses line directives, which would relabel the candidate's lines", "[scan]") {
  for (const char* s : {"#line 7 \"/usr/include/stdio.h\"\nint x;", "  # 12 \"/usr/include/math.h\" 3\n",
                        "%:line 3\n", "#/* hidden */line 4\n", "#li\\\nne 5\n", "# \\\n 9 \"x.h\"\n"}) {
    INFO(s);
    auto f = scan_source(s);
    REQUIRE(f);
    CHECK(f->construct == "#line");
  }
  CHECK(scan_source("int a;\n#line 9\n")->line == 2);
  CHECK_FALSE(scan_source("#include <cstdio>\n#pragma omp parallel for\n#define LINE 3\nint lines = LINE;\n"));
}

TEST_CASE("the source scan sees through digit separators and raw strings", "[scan]") {
  // A quote inside a number opens no character literal that would hide the code after it.
  auto f = scan_source("int n = 1'000;\nint k() { asm(\"nop\"); return 2'000; }\n");
  REQUIRE(f);
  CHECK(f->construct == "asm");
  CHECK(f->line == 2);
  // A raw string's quote closes nothing: the code after the literal is scanned, its inside is not.
  auto g = scan_source("const char* s = R\"x(\")x\";\nint k() { return fork(); }\n");
  REQUIRE(g);
  CHECK(g->construct == "fork");
  CHECK_FALSE(scan_source("const char* s = R\"(fork \" system)\";\nint v = L'x' + u8'y';\n"));
}

TEST_CASE("the scan of preprocessed text looks at the candidate's lines, not the system headers'", "[scan]") {
  using kevolve::harness::own_lines;
  using kevolve::harness::scan_preprocessed_source;
  const std::string text =
      "# 0 \"/tmp/kevolve-build-x/candidate.cpp\"\n"
      "# 0 \"<built-in>\"\n"
      "# 1 \"/usr/include/unistd.h\" 1 3 4\n"
      "extern int fork (void);\n"
      "extern long syscall (long __sysno, ...);\n"
      "# 2 \"/tmp/kevolve-build-x/candidate.cpp\" 2\n"
      "\n"
      "int k() {\n"
      "  asm (\".incbin \\\"/root/x\\\"\");\n"
      "}\n";
  const std::string own = own_lines(text);
  CHECK(own.find("fork") == std::string::npos);
  auto f = scan_preprocessed_source(text);
  REQUIRE(f);
  CHECK(f->construct == "asm");
  CHECK(f->line == 4);  // the line in candidate.cpp
  // A header path that leaves the toolchain once normalised is the candidate's.
  CHECK(scan_preprocessed_source("# 1 \"/usr/include/../../tmp/kevolve-build-x/candidate.cpp\"\nint p = fork();\n"));
  CHECK_FALSE(scan_preprocessed_source("# 1 \"/usr/include/stdlib.h\" 1 3 4\nextern int system (const char*);\n"));
}
