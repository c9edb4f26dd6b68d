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
