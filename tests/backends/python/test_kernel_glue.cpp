// The kernel glue that generated ModelNew files inline (backends/python/kevolve_kernel_glue.py), without a
// GPU: its launch lines resolve exactly as kevolve's CUDA evaluator resolves them, NVRTC compiles the CUDA
// templates through it (where the toolkit is installed), and a CUDA template kernel wrapped as ModelNew is
// valid Python that passes the evaluator's static check and is labelled a kernel. Launching on a device is
// for tools/gpu_check.sh on the GPU machine.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/test_support/skip.hpp"
#include "backends/backend.hpp"
#include "backends/process/run_captured.hpp"
#include "backends/cuda/launch_spec.hpp"
#include "backends/python/python_backend.hpp"
#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "tools/kevolve/setup/kernelbench_setup.hpp"
#include "runtime/config/problem_loader.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"
#include "tests/runtime/operators/kernelbench_helpers.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

const char* const kFamilies[] = {"softmax_rows", "layernorm_fwd", "rmsnorm_fwd", "gelu"};

// Runs a Python snippet with the torch python, the glue's folder first on its path; returns its stdout.
std::string run_python(const std::string& script, int& rc) {
  const fs::path file = fs::temp_directory_path() / ("kevolve-glue-" + std::to_string(getpid()) + ".py");
  std::ofstream(file) << "import sys\nsys.path.insert(0, "
                      << "'" << test::source_path("backends/python") << "')\n"
                      << script;
  std::string out;
  rc = process::run_captured({python::torch_python(), file.string()}, 300, out);
  if (!std::getenv("KEEP")) fs::remove(file);
  return out;
}

// The lines the snippet printed with a leading "= " (torch may print notes of its own), without that mark.
std::string marked(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.rfind("= ", 0) == 0) kept += line.substr(2) + "\n";
  return kept;
}

std::string py_literal(const std::string& s) {  // a Python string literal (triple-quoted raw text is not safe here)
  std::string o = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o + "\"";
}

bool no_torch_python() {
  if (!python::torch_python().empty()) return false;
  kevolve::test::say_skipped("no python3 with torch here (the kernel glue tests)");
  return true;
}

// Every value of every parameter, one at a time from the defaults: the points whose launches differ.
std::vector<Params> points(const KernelTemplate& t) {
  std::vector<Params> out{t.defaults()};
  for (auto& d : t.params)
    for (auto& v : d.values) {
      Params p = t.defaults();
      p[d.name] = v;
      if (t.violated(p).empty() && p != t.defaults()) out.push_back(p);
    }
  return out;
}

}  // namespace

TEST_CASE("the glue resolves the CUDA templates' launch lines exactly as kevolve's evaluator does", "[python][glue]") {
  if (no_torch_python()) return;
  std::ostringstream script, expected;
  script << "import kevolve_kernel_glue as g\ncases = [\n";
  int cases = 0;
  for (const char* family : kFamilies) {
    auto t = find_template("cuda", family, default_knowledge_roots());
    REQUIRE(t);
    auto spec = load_problem(test::source_path("problems/core/") + family + "/problem.toml");
    REQUIRE(spec);
    std::vector<ShapeBinding> shapes = spec->verify;
    shapes.push_back(spec->bench);
    shapes.push_back(spec->bench_cuda);
    for (auto& p : points(*t)) {
      auto src = t->render(p);
      REQUIRE(src);
      auto launch = cuda::parse_launch_spec(*src);
      REQUIRE(launch);
      for (auto& shape : shapes) {
        auto d = cuda::resolve_launch(*launch, shape, 132);
        REQUIRE(d);
        script << "  (" << py_literal(*src) << ", {";
        for (auto& [k, v] : shape) script << "\"" << k << "\": " << v << ", ";
        script << "\"SMS\": 132}),\n";
        expected << d->grid[0] << " " << d->grid[1] << " " << d->grid[2] << " " << d->block[0] << " " << d->block[1]
                 << " " << d->block[2] << " " << d->smem << "\n";
        ++cases;
      }
    }
  }
  script << "]\nfor src, sym in cases:\n    grid, block, smem = g._kv_launch_dims(g._kv_launch_spec(src), sym)\n"
            "    print('=', *grid, *block, smem)\n";
  int rc = 0;
  const std::string out = run_python(script.str(), rc);
  INFO(out.substr(0, 3000));
  REQUIRE(rc == 0);
  CHECK(cases > 40);
  CHECK(marked(out) == expected.str());
}

TEST_CASE("NVRTC compiles every CUDA template family through the glue, in process, to a cubin",
          "[python][glue][nvrtc]") {
  if (no_torch_python()) return;
  int rc = 0;
  if (marked(run_python("import kevolve_kernel_glue as g\nprint('=', len(g._kv_nvrtc_candidates()))\n", rc)) == "0\n") {
    kevolve::test::say_skipped("no libnvrtc on this machine (the NVRTC glue test)");
    return;
  }
  std::ostringstream script;
  script << "import kevolve_kernel_glue as g\nheader = " << py_literal(kernel_abi_header()) << "\n";
  for (const char* family : kFamilies) {
    auto t = find_template("cuda", family, default_knowledge_roots());
    REQUIRE(t);
    auto src = t->render(t->defaults());
    REQUIRE(src);
    script << "cubin = g._kv_nvrtc_compile(" << py_literal(*src) << ", header, 'sm_90')\n"
           << "print('=', '" << family << "', len(cubin), cubin[:4] == b'\\x7fELF')\n";
  }
  const std::string out = run_python(script.str(), rc);
  INFO(out);
  REQUIRE(rc == 0);
  const std::string got = marked(out);
  for (const char* family : kFamilies) CHECK(got.find(std::string(family) + " ") != std::string::npos);
  CHECK(got.find("False") == std::string::npos);  // every cubin is an ELF image
}

TEST_CASE(
    "a CUDA template kernel wrapped as ModelNew is valid Python, passes the static check and is labelled a kernel",
    "[python][glue]") {
  if (no_torch_python()) return;
  const ProblemSpec spec = python::kernelbench_problem(test::source_path("problems/kernelbench-small/5_layernorm.py"));
  auto setup = cli::kernelbench_operator(spec, "cuda", resolve_hardware("cuda", "auto"), true, false);
  REQUIRE(setup);
  REQUIRE(setup->op->has_kernels());
  const Offspring kernel = test::seed_and_child(*setup->op).second;
  CHECK(kernel.params.at("impl") == "kernel");
  CHECK(kernel.candidate.source.find("_kv_build(\"cuda\"") != std::string::npos);
  CHECK(kernel.candidate.source.find("// @kevolve kernel layernorm_fwd_kernel") != std::string::npos);
  std::ostringstream script;
  script << "import kevolve_py_eval as e\nsource = " << py_literal(kernel.candidate.source) << "\n"
         << "compile(source, 'model_new.py', 'exec')\nprint('= static', e.static_check(source, '5_layernorm'))\n"
         << "print('= label', e.label_of(source))\n";
  int rc = 0;
  const std::string out = run_python(script.str(), rc);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(marked(out) == "static None\nlabel kernel\n");
}
