// The build as the attack, through `kevolve eval` as a user runs it: a candidate that includes or
// .incbin's a file only root may read, reads the evaluator's stdin, or includes an endless device gets
// none of it into any field of the verdict, and the evaluator carries on. Also: words assembled by the
// preprocessor are found in the expanded text, and every verdict names how its build was confined.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "backends/backend.hpp"
#include "backends/cpu/build/compiler.hpp"
#include "backends/hip/build/hip_compiler.hpp"
#include "knowledge/template_library.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"
#include "tests/test_support/shell.hpp"
#include "tests/test_support/skip.hpp"

namespace fs = std::filesystem;
using namespace kevolve;

namespace {

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& base = "/tmp") {
    std::string t = base + "/kevolve-test-attack-XXXXXX";
    path = mkdtemp(t.data()) ? t : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string marker() {
  std::random_device rd;
  return "KVSECRET" + std::to_string(rd()) + std::to_string(rd());
}

// A root-only file (mode 600 in a folder of mode 700) holding `text`.
std::string secret_file(const TempDir& d, const std::string& text) {
  const std::string p = d.path + "/secret.txt";
  std::ofstream(p) << text << "\n";
  chmod(p.c_str(), 0600);
  chmod(d.path.c_str(), 0700);
  return p;
}

// `kevolve eval --json` on `source` (stdin: `stdin_text`); stdout and stderr together.
test::ShellResult kevolve_eval(const std::string& source, const std::string& extra = "",
                               const std::string& stdin_text = "") {
  TempDir d;
  const std::string cand = d.path + "/candidate.cpp", in = d.path + "/stdin.txt";
  std::ofstream(cand) << source;
  std::ofstream(in) << stdin_text;
  return test::shell(std::string(KEVOLVE_BIN_DIR) + "/kevolve eval --json --problem " +
                     test::source_path("problems/core/softmax_rows") + " --candidate " + cand + " " + extra + " < " +
                     in + " 2>&1");
}

// The secret files of a test: one in a temp folder, one under /root when this runs as root.
std::vector<std::string> secrets(const TempDir& tmp, const std::string& mark, std::unique_ptr<TempDir>& in_root) {
  std::vector<std::string> files{secret_file(tmp, mark)};
  if (geteuid() == 0 && fs::is_directory("/root")) {
    in_root = std::make_unique<TempDir>("/root");
    if (!in_root->path.empty()) files.push_back(secret_file(*in_root, mark));
  }
  return files;
}

}  // namespace

TEST_CASE("a candidate that includes a root-only file gets none of it into the verdict", "[build][attack]") {
  const std::string mark = marker();
  TempDir tmp;
  std::unique_ptr<TempDir> in_root;
  for (const auto& file : secrets(tmp, mark, in_root)) {
    INFO(file);
    const auto r = kevolve_eval("#include \"kevolve_kernel.h\"\n#include \"" + file + "\"\n");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("\"status\":\"compile_error\"") != std::string::npos);
    CHECK(r.out.find(mark) == std::string::npos);
    CHECK(r.out.find("build sandbox: ") != std::string::npos);
  }
}

TEST_CASE("a token-pasted .incbin of a root-only file is found after expansion, and assembles nothing",
          "[build][attack]") {
  const std::string mark = marker();
  TempDir tmp;
  std::unique_ptr<TempDir> in_root;
  for (const auto& file : secrets(tmp, mark, in_root)) {
    INFO(file);
    // The honest part prints the embedded bytes once, were they ever there.
    const std::string src = test::read_file(test::source_path("problems/core/softmax_rows/fast.cpp")) +
                            "\n#define CAT(a, b) a##b\nCAT(as, m)(\".section .rodata\\n.incbin \\\"" + file +
                            "\\\"\\n.byte 0\\n.text\");\n";
    const auto scanned = kevolve_eval(src);
    INFO(scanned.out);
    CHECK(scanned.out.find("\"status\":\"rejected\"") != std::string::npos);
    CHECK(scanned.out.find("after macro expansion") != std::string::npos);
    CHECK(scanned.out.find("'asm'") != std::string::npos);
    CHECK(scanned.out.find(mark) == std::string::npos);
    // With the scan off, the sandbox alone is the wall: the file is not there to embed.
    const auto walled = kevolve_eval(src, "--detector-off isolation");
    INFO(walled.out);
    CHECK(walled.out.find("\"status\":\"compile_error\"") != std::string::npos);
    CHECK(walled.out.find(mark) == std::string::npos);
  }
}

TEST_CASE("a candidate that includes /dev/stdin reads nothing of the evaluator's input", "[build][attack]") {
  const std::string mark = marker();
  const auto r = kevolve_eval("#include \"/dev/stdin\"\n", "", "int " + mark + " = 1;\nint x = " + mark + ";\n");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find(mark) == std::string::npos);  // what the evaluator was given on its stdin never gets in
  if (r.out.find("NO private filesystem") != std::string::npos) {
    // No private filesystem here (a chroot, say): /dev/stdin exists for the compiler but is /dev/null, so the
    // candidate compiles to nothing and cannot load; it never scores.
    CHECK(r.out.find("\"status\":\"ok\"") == std::string::npos);
  } else {
    CHECK(r.out.find("\"status\":\"compile_error\"") != std::string::npos);  // no /dev/stdin in the build's root
  }
}

TEST_CASE("a candidate that includes an endless device ends as compile_error within the build's memory limit",
          "[build][attack]") {
  // /dev/zero: not in the build's root (where a private filesystem exists), bounded by RLIMIT_AS where not.
  const auto r = kevolve_eval("#include \"/dev/zero\"\n");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"status\":\"compile_error\"") != std::string::npos);
  // /dev/urandom is in the build's root: cc1plus reads it until the address-space limit stops it.
  TempDir d;
  cpu::CompileOptions o;
  o.limits.memory_bytes = int64_t{512} << 20;
  Candidate c;
  c.source = "#include \"/dev/urandom\"\n";
  const BuildResult b = cpu::compile_cpu(c, d.path, o);
  INFO(b.log << "\n" << b.sandbox);
  CHECK_FALSE(b.status.ok());
  CHECK(b.status.code == Errc::failed);  // the compiler failed: not a timeout, not a missing sandbox
  CHECK(b.sandbox.find("RLIMIT_AS/DATA 512 MiB") != std::string::npos);
  CHECK(b.log.find("did not finish") == std::string::npos);  // the limit ended it, not the deadline
  CHECK(b.log.size() <= (64u << 10) + 200);
  // The evaluator is unharmed: the next candidate is evaluated as usual (or, on a machine too busy to time
  // it, refused as such: never a build failure).
  const auto honest = test::eval_file("problems/core/softmax_rows/problem.toml", "problems/core/softmax_rows/fast.cpp");
  INFO(honest.message << "\n" << honest.sandbox);
  CHECK((honest.status == EvalStatus::ok || (honest.status == EvalStatus::harness_error && honest.reason == "busy")));
  CHECK(honest.sandbox.find("build sandbox: ") != std::string::npos);
}

TEST_CASE("CUDA words assembled by the preprocessor are found in nvcc's expanded text", "[build][attack][cuda]") {
  EvalOptions o;
  o.arch = "sm_90";
  Candidate c;
  c.language = "cuda";
  c.source =
      "#include <pthread.h>\n#define CAT(a, b) a##b\n"
      "static void* spin(void*) { return nullptr; }\n"
      "extern \"C\" int kevolve_kernel() { pthread_t t; CAT(pthread_, create)(&t, nullptr, spin, nullptr);\n"
      "  cudaStream_t s; CAT(cudaStream, CreateWithFlags)(&s, 1); return 0; }\n";
  BuiltCandidate b = build_candidate("cuda", c, o);
  remove_build_dir(b.dir);
  REQUIRE(b.verdict);
  INFO(b.verdict->message << "\n" << b.build.log);
  if (b.verdict->reason == "toolchain") {
    test::say_skipped("nvcc is not installed here: " + b.verdict->message);
    return;
  }
  CHECK(b.verdict->status == EvalStatus::rejected);
  CHECK(b.verdict->reason == "isolation");
  CHECK(b.verdict->message.find("after macro expansion") != std::string::npos);
  CHECK(b.verdict->message.find("pthread_create") != std::string::npos);  // the first of the two, line 4
  CHECK(b.verdict->sandbox.find("build sandbox: ") != std::string::npos);
}

TEST_CASE("HIP: a device clock assembled by the preprocessor is found, the honest templates pass the scan",
          "[build][attack][hip]") {
  if (hip::hipcc_path().empty()) {
    test::say_skipped("hipcc is not installed here");
    return;
  }
  EvalOptions o;
  o.arch = "gfx90a";
  Candidate c;
  c.language = "hip";
  c.source =
      "// @kevolve kernel k\n// @kevolve grid 1\n// @kevolve block 64\n#include \"kevolve_kernel.h\"\n"
      "#include \"kevolve_gpu_portable.h\"\n#define CAT(a, b) a##b\n"
      "extern \"C\" __global__ void k(const kv_cuda_args a) { long long t = CAT(wall_clock, 64)(); (void)t; }\n";
  BuiltCandidate b = build_candidate("hip", c, o);
  remove_build_dir(b.dir);
  REQUIRE(b.verdict);
  INFO(b.verdict->message);
  CHECK(b.verdict->reason == "isolation");
  CHECK(b.verdict->message.find("after macro expansion") != std::string::npos);
  CHECK(b.verdict->message.find("wall_clock64") != std::string::npos);
  // No honest template (seed point) trips the second pass: the portability header and the system headers
  // it expands are not the candidate's lines.
  int templates = 0;
  for (auto& dir : fs::directory_iterator(test::source_path("problems/core"))) {
    auto t = find_template("hip", dir.path().filename().string(), {test::source_path("knowledge")});
    if (!t) continue;
    auto src = t->render(t->defaults());
    REQUIRE(src);
    Candidate h;
    h.language = "hip";
    h.source = *src;
    BuiltCandidate built = build_candidate("hip", h, o);
    remove_build_dir(built.dir);
    INFO(dir.path().filename().string() << ": " << (built.verdict ? built.verdict->message : std::string("built")));
    CHECK((!built.verdict || built.verdict->reason != "isolation"));
    ++templates;
  }
  CHECK(templates > 0);
}

TEST_CASE("words split by a line splice or pasted by a macro are found in g++'s expanded text", "[build][attack]") {
  EvalOptions o;
  for (const char* src : {"#include \"kevolve_kernel.h\"\nint k() { as\\\nm(\"nop\"); return 0; }\n",
                          "#include <cstdlib>\n#define CAT(a, b) a##b\nint k() { return CAT(sys, tem)(\"id\"); }\n"}) {
    INFO(src);
    Candidate c;
    c.source = src;
    CHECK_FALSE(harness::scan_source(c.source));  // the raw text hides the word
    BuiltCandidate b = build_candidate("cpu", c, o);
    remove_build_dir(b.dir);
    REQUIRE(b.verdict);
    INFO(b.verdict->message);
    CHECK(b.verdict->status == EvalStatus::rejected);
    CHECK(b.verdict->message.find("after macro expansion") != std::string::npos);
    CHECK(b.verdict->sandbox.find("build sandbox: ") != std::string::npos);
  }
}
