// The HIP backend without an AMD GPU: every HIP template compiles as HIP for gfx90a, gfx908 and gfx1030
// (hipcc) and as CUDA (NVRTC) through the portability header; the code object's metadata gives its
// resource use and occupancy; a kernel that spills or exceeds LDS is refused before any run; and an
// evaluation without an AMD GPU (or without the HIP worker) is a harness_error that says so.
// Compilers that are missing make the test print a KEVOLVE-SKIPPED reason.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/hip/build/hip_compiler.hpp"
#include "backends/hip/code_object.hpp"
#include "backends/hip/hip_backend.hpp"
#include "runtime/config/problem_loader.hpp"
#include "tests/backends/hip/hip_helpers.hpp"
#include "tests/test_support/skip.hpp"

using namespace kevolve;

namespace {

// A private folder removed at the end of the test.
struct TempDir {
  std::string path = make_build_dir();
  ~TempDir() { remove_build_dir(path); }
};

// Compiles `src` (plain HIP, no launch lines) with hipcc for `arch` and returns the code object's bytes.
std::string hipcc_code_object(const std::string& src, const std::string& arch, bool bundle = false) {
  TempDir d;
  std::ofstream(d.path + "/k.hip") << src;
  std::string cmd = kevolve::hip::hipcc_path() + " --genco --offload-arch=" + arch +
                    (bundle ? "" : " --no-gpu-bundle-output") + " -O3 " + d.path + "/k.hip -o " + d.path + "/k.hsaco";
  if (std::system(cmd.c_str()) != 0) return "";
  return test::read_file(d.path + "/k.hsaco");
}

const char* kKernels = R"(#include <hip/hip_runtime.h>
extern "C" __global__ void __attribute__((amdgpu_num_vgpr(12))) spills(float* x) {
  float v[48];
#pragma unroll
  for (int k = 0; k < 48; ++k) v[k] = x[threadIdx.x + k * 64];
  float s = 0;
#pragma unroll
  for (int k = 0; k < 48; ++k) s += v[k] * v[(k * 7) % 48];
  x[threadIdx.x] = s;
}
extern "C" __global__ void __launch_bounds__(256) lds8k(float* x) {
  __shared__ float s[2048];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 2048];
}
)";

}  // namespace

TEST_CASE("every HIP template renders and compiles as CUDA with NVRTC through the portability header",
          "[hip][templates][nvrtc]") {
  EvalOptions o;
  o.arch = "sm_90";
  for (auto& p : test::hip_template_points("amd-cdna2", false)) {
    INFO(p.problem << " at its " << p.point);
    Candidate c;
    c.language = "cuda";
    c.source = p.source;
    BuiltCandidate b = cuda::build(c, o);
    if (b.verdict && b.verdict->reason == "toolchain") {
      test::say_skipped("HIP templates as CUDA: NVRTC is not available here (" + b.verdict->message + ")");
      remove_build_dir(b.dir);
      return;
    }
    INFO((b.verdict ? b.verdict->message + "\n" + b.verdict->compile_log : std::string()));
    CHECK_FALSE(b.verdict);
    remove_build_dir(b.dir);
  }
}

TEST_CASE("every HIP template compiles with hipcc for gfx90a, gfx908 and gfx1030 within the target's limits",
          "[hip][templates][hipcc]") {
  if (kevolve::hip::hipcc_path().empty()) {
    test::say_skipped("HIP templates for gfx90a/gfx908/gfx1030: hipcc is not installed (apt-get install hipcc)");
    return;
  }
  struct Target {
    const char* arch;
    int wave;
  };
  for (const Target t : {Target{"gfx90a", 64}, Target{"gfx908", 64}, Target{"gfx1030", 32}}) {
    for (auto& p : test::hip_template_points("amd-cdna2", true, t.wave)) {
      INFO(p.problem << " at its " << p.point << " for " << t.arch);
      TempDir d;
      auto h = kevolve::hip::compile_hip(p.source, d.path, t.arch);
      INFO(h.build.log);
      REQUIRE(h.build.status.ok());
      CHECK(h.refusal.empty());
      CHECK(h.resources.wave_size == t.wave);
      CHECK(h.resources.target.find(t.arch) != std::string::npos);
      CHECK(h.resources.vgpr_spills == 0);
      CHECK(h.resources.sgpr_spills == 0);
      CHECK(h.resources.block_threads > 0);
      CHECK(h.resources.waves_per_simd > 0);
      CHECK(h.build.log.find("waves/SIMD") != std::string::npos);  // the static feedback is in the build log
    }
  }
}

TEST_CASE("resource use is read from real code objects, ELF or offload bundle", "[hip][code_object]") {
  if (kevolve::hip::hipcc_path().empty()) {
    test::say_skipped("code object metadata: hipcc is not installed (apt-get install hipcc)");
    return;
  }
  for (bool bundle : {false, true}) {
    INFO("offload bundle: " << bundle);
    const std::string co = hipcc_code_object(kKernels, "gfx90a", bundle);
    REQUIRE_FALSE(co.empty());
    auto ks = kevolve::hip::read_code_object(co);
    REQUIRE(ks);
    REQUIRE(ks->size() == 2);
    const GpuResources* spills = nullptr;
    const GpuResources* lds = nullptr;
    for (auto& k : *ks) (k.kernel == "spills" ? spills : lds) = &k;
    REQUIRE(spills);
    REQUIRE(lds);
    CHECK(spills->target == "amdgcn-amd-amdhsa--gfx90a");
    CHECK(spills->wave_size == 64);
    CHECK(spills->vgpr_spills > 0);
    CHECK(spills->scratch_bytes > 0);
    CHECK(lds->kernel == "lds8k");
    CHECK(lds->lds_bytes == 8192);
    CHECK(lds->vgpr_spills == 0);
    CHECK(lds->scratch_bytes == 0);
    CHECK(lds->max_workgroup_size == 256);
    CHECK(lds->vgprs > 0);
    CHECK(lds->sgprs > 0);
  }
  const std::string rdna = hipcc_code_object(kKernels, "gfx1030");
  auto ks = kevolve::hip::read_code_object(rdna);
  REQUIRE(ks);
  CHECK(ks->at(0).wave_size == 32);
  CHECK(ks->at(0).target.find("gfx1030") != std::string::npos);
}

TEST_CASE("a kernel that spills or exceeds LDS is refused before any run and occupancy per launch",
          "[hip][code_object]") {
  auto t = kevolve::hip::target_limits("gfx90a");
  REQUIRE(t);
  CHECK_FALSE(kevolve::hip::target_limits("gfx1100"));  // not in the table: said so

  GpuResources r;
  r.kernel = "k";
  r.wave_size = 64;
  r.vgprs = 128;
  r.sgprs = 32;
  r.lds_bytes = 0;
  kevolve::hip::apply_launch(r, *t, 256, 0);
  CHECK(r.waves_per_simd == 4);  // 512 / 128
  CHECK(r.occupancy_limit == "vgprs");
  CHECK(kevolve::hip::refusal(r, *t).empty());

  r.vgprs = 24;
  kevolve::hip::apply_launch(r, *t, 256, 32768);  // two 32 KiB workgroups per CU, 4 waves each over 4 SIMDs
  CHECK(r.waves_per_simd == 2);
  CHECK(r.occupancy_limit == "lds");

  kevolve::hip::apply_launch(r, *t, 256, 60000);  // 60000 B + 8 KiB static > 64 KiB per workgroup
  r.lds_bytes = 8192;
  kevolve::hip::apply_launch(r, *t, 256, 60000);
  CHECK(r.waves_per_simd == 0);
  CHECK(kevolve::hip::refusal(r, *t).find("LDS") != std::string::npos);

  GpuResources s = r;
  s.lds_bytes = 0;
  s.vgpr_spills = 3;
  kevolve::hip::apply_launch(s, *t, 256, 0);
  CHECK(kevolve::hip::refusal(s, *t).find("spills") != std::string::npos);

  auto g908 = kevolve::hip::target_limits("gfx908");
  REQUIRE(g908);
  GpuResources a;
  a.wave_size = 64;
  a.vgprs = 40;
  a.agprs = 100;  // gfx908: AGPRs are a file of their own, the larger use bounds occupancy
  a.sgprs = 16;
  kevolve::hip::apply_launch(a, *g908, 64, 0);
  CHECK(a.waves_per_simd == 2);  // 256 / 100 rounded up to 104
}

TEST_CASE("malformed code objects are errors that say what is wrong", "[hip][code_object]") {
  auto e = kevolve::hip::read_code_object("not an elf at all, not an elf at all, not an elf at all, not an elf");
  REQUIRE_FALSE(e);
  CHECK(e.error().find("not an ELF") != std::string::npos);
  auto b = kevolve::hip::read_code_object(std::string("__CLANG_OFFLOAD_BUNDLE__") + std::string(4, '\x01'));
  REQUIRE_FALSE(b);
  CHECK(b.error().find("bundle") != std::string::npos);
  if (kevolve::hip::hipcc_path().empty()) return;
  const std::string co = hipcc_code_object(kKernels, "gfx90a");
  REQUIRE_FALSE(co.empty());
  auto cut = kevolve::hip::read_code_object(co.substr(0, co.size() / 3));
  CHECK_FALSE(cut);  // truncated: the section headers or the note are out of range
}

TEST_CASE("without an AMD GPU a HIP evaluation is a harness_error that says why, never a verdict", "[hip][device]") {
  const std::string why = backend_unavailable("hip");
  if (why.empty()) {
    test::say_skipped("this machine has an AMD GPU and the HIP worker: the no-device answer cannot be tested here");
    return;
  }
  CHECK(
      (why.find("no AMD GPU") != std::string::npos || why.find("HIP not built on this machine") != std::string::npos));
  CHECK(backend_unavailable("cpu").empty());
  auto spec = load_problem(test::source_path("problems/core/gelu/problem.toml"));
  REQUIRE(spec);
  auto points = test::hip_template_points("amd-cdna2", false);
  const auto gelu = std::find_if(points.begin(), points.end(), [](auto& p) { return p.problem == "gelu"; });
  REQUIRE(gelu != points.end());
  Candidate c;
  c.language = candidate_language("hip");
  CHECK(c.language == "hip");
  c.source = gelu->source;
  c.entry = spec->entry;
  auto b = make_backend("hip");
  REQUIRE(b);
  const EvalResult r = b->evaluate_source(*spec, c, test::quick_options());
  INFO(r.message << "\n" << r.compile_log);
  CHECK(r.status == EvalStatus::harness_error);
  CHECK(r.message == why);
  if (!kevolve::hip::hipcc_path().empty()) CHECK(r.compile_log.find("waves/SIMD") != std::string::npos);  // built
}

// The worker itself (not the backend's rocminfo check in front of it): the CUDA worker's evaluator and runner
// built for HIP. Asked for a verdict on a machine without an AMD GPU, it answers a harness_error naming the
// missing device, and its runner is installed beside it.
TEST_CASE("the HIP worker answers no AMD GPU itself when the HIP runtime finds none", "[hip][device]") {
  const std::string worker = kevolve::hip::hip_worker_path();
  if (!std::filesystem::exists(worker)) {
    test::say_skipped("the HIP worker is not built here (no HIP runtime when kevolve was built)");
    return;
  }
  CHECK(std::filesystem::exists(std::filesystem::path(worker).parent_path() / "kevolve-hip-runner"));
  if (kevolve::hip::unavailable_reason(worker).empty()) {
    test::say_skipped("this machine has an AMD GPU: the no-device answer cannot be tested here");
    return;
  }
  auto spec = load_problem(test::source_path("problems/core/gelu/problem.toml"));
  REQUIRE(spec);
  TempDir d;
  const std::string artifact = d.path + "/candidate.hsaco";
  std::ofstream(artifact) << "not a code object";
  WorkerClient w;
  const EvalResult r = w.evaluate_in(worker, EvalRequest{*spec, artifact, "", test::quick_options()});
  INFO(r.message);
  CHECK(r.status == EvalStatus::harness_error);
  CHECK(r.message.find("no AMD GPU (the HIP runtime found none") != std::string::npos);
  CHECK(r.message.find("CUDA") == std::string::npos);
}
