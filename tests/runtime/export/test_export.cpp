// kevolve export as a user meets it: the exported PyTorch extension builds with the installed torch and
// computes what the reference computes; the KernelBench ModelNew does too; the CUDA source compiles with
// nvcc where it is installed; what cannot be exported says why.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_support/skip.hpp"

namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out;
};

Run sh(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

const std::string src = KEVOLVE_SOURCE_DIR;
const std::string kevolve_bin = std::string(KEVOLVE_BIN_DIR) + "/kevolve";

// A python3 that has torch (Debian's; another python3 may come first on PATH), or "".
std::string torch_python() {
  for (const char* p : {"/usr/bin/python3", "python3"})
    if (sh(std::string(p) + " -c 'import torch, torch.utils.cpp_extension'").code == 0) return p;
  return "";
}

std::string fresh_dir(const std::string& tag) {
  const auto d = fs::temp_directory_path() / ("kevolve-export-" + tag + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d.string();
}

}  // namespace

TEST_CASE("an exported CPU kernel builds as a PyTorch extension and matches the reference", "[export]") {
  const std::string py = torch_python();
  if (py.empty()) {
    ::kevolve::test::say_skipped("no python3 with torch here (the extension build)");
    return;
  }
  const std::string out = fresh_dir("ext");
  auto r = sh(kevolve_bin + " export " + src +
              "/problems/core/rmsnorm_fwd/fast.cpp --problem rmsnorm_fwd --format torch-extension --out " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (const char* f : {"setup.py", "CMakeLists.txt", "binding.cpp", "kernel.cpp", "kevolve_kernel.h"})
    CHECK(fs::exists(fs::path(out) / f));
  auto b = sh("cd " + out + " && " + py + " setup.py build_ext --inplace");
  INFO(b.out.substr(b.out.size() > 3000 ? b.out.size() - 3000 : 0));
  REQUIRE(b.code == 0);
  std::ofstream(out + "/check.py") << "import torch, rmsnorm_fwd_kevolve as m\n"
                                      "torch.manual_seed(0)\n"
                                      "x = torch.randn(37, 513); w = torch.rand(513) + 0.5\n"
                                      "y = m.forward(x, w)[0]\n"
                                      "ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n"
                                      "print('max_err', float((y - ref).abs().max()))\n"
                                      "try:\n    m.forward(x.double(), w)\nexcept RuntimeError as e:\n    "
                                      "print('refused:', str(e).splitlines()[0])\n";
  auto c = sh("cd " + out + " && " + py + " check.py");
  INFO(c.out);
  REQUIRE(c.code == 0);
  const auto at = c.out.find("max_err ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(c.out.substr(at + 8)) < 1e-4);
  CHECK(c.out.find("refused: rmsnorm_fwd: input 'x' must be float32") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("an exported KernelBench ModelNew runs and matches F.gelu", "[export]") {
  const std::string py = torch_python();
  if (py.empty()) {
    ::kevolve::test::say_skipped("no python3 with torch here (the KernelBench export)");
    return;
  }
  const std::string out = fresh_dir("kb");
  auto r = sh(kevolve_bin + " export " + src +
              "/problems/core/gelu/fast.cpp --problem gelu --format kernelbench --out " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(out + "/gelu_kernelbench.py"));
  std::ofstream(out + "/check.py") << "import sys, torch\nsys.path.insert(0, '" << out
                                   << "')\n"
                                      "from gelu_kernelbench import ModelNew\n"
                                      "x = torch.randn(100003)\n"
                                      "y = ModelNew()(x)\n"
                                      "print('max_err', float((y - torch.nn.functional.gelu(x)).abs().max()))\n";
  auto c = sh("cd " + out + " && TORCH_EXTENSIONS_DIR=" + out + "/ext " + py + " check.py");
  INFO(c.out);
  REQUIRE(c.code == 0);
  const auto at = c.out.find("max_err ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(c.out.substr(at + 8)) < 1e-4);
  fs::remove_all(out);
}

TEST_CASE("a kernel-only CUDA kernel exports as source with a generated launcher", "[export][cuda]") {
  const std::string out = fresh_dir("cu");
  auto r = sh(kevolve_bin + " export " + src +
              "/tests/backends/cuda/honest/gelu_kernel_only.cu --problem gelu --format cuda-source --out " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::ifstream in(out + "/gelu.cu");
  std::stringstream s;
  s << in.rdbuf();
  CHECK(s.str().find("extern \"C\" int kevolve_launch(const kv_args* a)") != std::string::npos);
  CHECK(s.str().find("const int64_t N = a->inputs[0].shape[0];") != std::string::npos);
  CHECK(s.str().find("gelu_k<<<grid, block, smem, static_cast<cudaStream_t>(a->stream)>>>(k);") != std::string::npos);
  CHECK(fs::exists(out + "/gelu.h"));
  CHECK(fs::exists(out + "/USAGE.md"));
  const std::string nvcc = fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
  if (nvcc.empty()) {
    ::kevolve::test::say_skipped("no nvcc here (compiling the exported CUDA source)");
  } else {
    auto c = sh("cd " + out + " && " + nvcc + " -O3 -gencode=arch=compute_90,code=sm_90 -c gelu.cu -o gelu.o");
    INFO(c.out);
    CHECK(c.code == 0);
  }
  fs::remove_all(out);
}

TEST_CASE("what cannot be exported is refused with the reason", "[export]") {
  const std::string out = fresh_dir("bad");
  auto r = sh(kevolve_bin + " export " + src +
              "/problems/core/batch_event_truncate/fast.cpp --problem batch_event_truncate --out " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find("output 'out_values' has a data-dependent size") != std::string::npos);
  r = sh(kevolve_bin + " export " + src + "/problems/core/gelu/fast.cpp --out " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find("needs --problem") != std::string::npos);
  r = sh(kevolve_bin + " export /no/such/thing --problem gelu --out " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find("not a report folder, a search config (.toml) or a kernel file") != std::string::npos);
  fs::remove_all(out);
}
