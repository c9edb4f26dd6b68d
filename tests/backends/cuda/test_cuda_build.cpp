// The CUDA build step and launch descriptions, without a GPU: parsing, resolving per shape, and the real
// NVRTC build where the toolkit is installed (else the clear "not available" verdict).
#include <catch2/catch.hpp>

#include <filesystem>

#include "backends/cuda/launch_spec.hpp"
#include "knowledge/template_library.hpp"
#include "tests/backends/cuda/cuda_helpers.hpp"

using namespace kevolve;
using namespace kevolve::cuda;

TEST_CASE("launch lines are parsed and resolved per shape", "[cuda][launch]") {
  const std::string src =
      "// @kevolve kernel rms\n// @kevolve grid min(cdiv(T, 4), SMS * 8)\n// @kevolve block 128\n"
      "// @kevolve block_y 4\n// @kevolve smem 4 * H\nextern \"C\" __global__ void rms() {}\n";
  REQUIRE(has_launch_spec(src));
  auto s = parse_launch_spec(src);
  REQUIRE(s);
  CHECK(s->kernel == "rms");
  auto d = resolve_launch(*s, {{"T", 4096}, {"H", 1024}}, 132);
  REQUIRE(d);
  CHECK(d->grid[0] == 1024);
  CHECK(d->block[0] == 128);
  CHECK(d->block[1] == 4);
  CHECK(d->smem == 4096);
  auto small = resolve_launch(*s, {{"T", 7}, {"H", 33}}, 132);
  REQUIRE(small);
  CHECK(small->grid[0] == 2);
  // Round trip through the file written beside the kernel image.
  auto again = parse_launch_spec(format_launch_spec(*s));
  REQUIRE(again);
  CHECK(again->grid[0] == s->grid[0]);
  CHECK(again->smem == s->smem);
}

TEST_CASE("bad launch descriptions name the line and the key", "[cuda][launch]") {
  auto unknown = parse_launch_spec("// @kevolve kernel k\n// @kevolve grids 4\n");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().find("line 2") != std::string::npos);
  CHECK(unknown.error().find("unknown key") != std::string::npos);
  auto no_kernel = parse_launch_spec("// @kevolve grid 4\n// @kevolve block 32\n");
  REQUIRE_FALSE(no_kernel);
  CHECK(no_kernel.error().find("kernel") != std::string::npos);
  auto s = parse_launch_spec("// @kevolve kernel k\n// @kevolve grid cdiv(N, 256)\n// @kevolve block 2048\n");
  REQUIRE(s);
  auto d = resolve_launch(*s, {{"N", 1000}}, 132);
  REQUIRE_FALSE(d);
  CHECK(d.error().find("block '2048'") != std::string::npos);
  auto sym = resolve_launch(
      *parse_launch_spec("// @kevolve kernel k\n// @kevolve grid cdiv(Q, 2)\n// @kevolve block 32\n"), {{"N", 4}}, 1);
  REQUIRE_FALSE(sym);
  CHECK(sym.error().find("unknown symbol 'Q'") != std::string::npos);
}

TEST_CASE("the source scan refuses streams of its own before anything is compiled", "[cuda][scan]") {
  Candidate c;
  c.language = "cuda";
  c.source =
      "#include \"kevolve_kernel.h\"\nextern \"C\" int kevolve_kernel(const kv_args* a) {\n  cudaStream_t s;\n"
      "  cudaStreamCreate(&s);\n  return 0;\n}\n";
  BuiltCandidate b = cuda::build(c, EvalOptions{});
  REQUIRE(b.verdict);
  CHECK(b.verdict->status == EvalStatus::rejected);
  CHECK(b.verdict->reason == "isolation");
  CHECK(b.verdict->message.find("line 4") != std::string::npos);
  CHECK(b.dir.empty());
}

TEST_CASE("kernel-only candidates build with NVRTC for the real architecture, or say NVRTC is missing",
          "[cuda][build]") {
  Candidate c;
  c.language = "cuda";
  c.source = test::read_file(test::source_path("tests/backends/cuda/honest/gelu_kernel_only.cu"));
  EvalOptions o;
  o.arch = "sm_90";
  BuiltCandidate b = cuda::build(c, o);
  if (b.verdict && b.verdict->reason == "toolchain") {
    std::cout << "NVRTC is missing; checking the verdict says so: " << b.verdict->message << "\n";
    CHECK(b.verdict->status == EvalStatus::harness_error);
    CHECK(b.verdict->message.find("NVRTC is not available") != std::string::npos);
  } else {
    REQUIRE_FALSE(b.verdict);
    CHECK(b.build.status.ok());
    CHECK(b.build.artifact.size() > 6);
    CHECK(b.build.artifact.substr(b.build.artifact.size() - 6) == ".cubin");
    CHECK(std::filesystem::exists(b.build.artifact + ".launch"));
    INFO("build log: " << b.build.log.substr(0, 2000));
    // Real machine code and its register count: from NVRTC's ptxas lines ("Used N registers"), which NVRTC
    // 13.0 on the H200 machine leaves out of some logs, or from the cubin's resource line (cuobjdump's
    // "REG:", which older cuobjdumps do not print).
    CHECK(b.build.log.find("== SASS (sm_90) ==") != std::string::npos);
    CHECK((b.build.log.find("Used ") != std::string::npos || b.build.log.find("REG:") != std::string::npos));
  }
  remove_build_dir(b.dir);

  // A compile error is the candidate's fault, with the compiler's words.
  c.source =
      "#include \"kevolve_kernel.h\"\n// @kevolve kernel k\n// @kevolve grid 1\n// @kevolve block 32\n"
      "extern \"C\" __global__ void k(const kv_cuda_args a) { undeclared_thing = 1; }\n";
  BuiltCandidate bad = cuda::build(c, o);
  REQUIRE(bad.verdict);
  if (bad.verdict->reason != "toolchain") {
    CHECK(bad.verdict->status == EvalStatus::compile_error);
    CHECK(bad.verdict->compile_log.find("undeclared_thing") != std::string::npos);
  }
  remove_build_dir(bad.dir);
}

TEST_CASE("every core problem has a CUDA template whose seed and sampled points build for sm_90", "[cuda][templates]") {
  namespace fs = std::filesystem;
  EvalOptions o;
  o.arch = "sm_90";
  int problems = 0;
  for (auto& dir : fs::directory_iterator(test::source_path("problems/core"))) {
    const std::string name = dir.path().filename().string();
    INFO(name);
    auto spec = load_problem((dir.path() / "problem.toml").string());
    REQUIRE(spec);
    CHECK_FALSE(spec->bench_cuda.empty());  // the GPU benchmark size
    auto t = find_template("cuda", name, {test::source_path("knowledge")});
    REQUIRE(t);
    ++problems;
    // The seed (defaults) and the last value of every parameter, each built for real where NVRTC exists.
    std::vector<Params> points{t->defaults()};
    Params last = t->defaults();
    for (auto& d : t->params) last[d.name] = d.values.back();
    if (t->violated(last).empty()) points.push_back(last);
    for (auto& p : points) {
      auto src = t->render(p);
      REQUIRE(src);
      Candidate c;
      c.language = "cuda";
      c.source = *src;
      BuiltCandidate b = cuda::build(c, o);
      if (b.verdict && b.verdict->reason == "toolchain") {
        std::cout << "not built here (no NVRTC), the CUDA template of " << name << ": " << b.verdict->message << "\n";
      } else {
        INFO((b.verdict ? b.verdict->message + "\n" + b.verdict->compile_log : std::string()));
        CHECK_FALSE(b.verdict);
        CHECK(b.build.log.find("local memory: YES") ==
              std::string::npos);  // no spills in the SASS (where cuobjdump exists)
      }
      remove_build_dir(b.dir);
    }
  }
  CHECK(problems == 12);
}
