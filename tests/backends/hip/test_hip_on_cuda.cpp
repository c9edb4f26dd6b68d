// Correctness of the HIP templates on an NVIDIA GPU: every HIP template at its defaults, compiled as CUDA
// through kevolve_gpu_portable.h, is evaluated by the CUDA interpreter (kevolve-cuda-eval: the reference,
// every verification shape, the anti-cheat checks) and must be `ok`. Part of test_cuda_backend, so
// tools/gpu_check.sh runs it; alone: test_cuda_backend "[hip-on-cuda]". Skipped without a GPU.
#include <catch2/catch.hpp>

#include "tests/backends/cuda/cuda_helpers.hpp"
#include "tests/backends/hip/hip_helpers.hpp"

using namespace kevolve;

TEST_CASE("every HIP template at its defaults is correct on the GPU as CUDA", "[cuda][gpu][hip-on-cuda]") {
  if (test::skip_without_gpu("HIP templates through the CUDA interpreter")) return;
  for (auto& p : test::hip_template_points("amd-cdna2", false)) {
    INFO(p.problem << " (HIP template at its defaults, built as CUDA)");
    const EvalResult r = test::cuda_eval_source("problems/core/" + p.problem + "/problem.toml", p.source);
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n"
                               << r.compile_log << "\n"
                               << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
    std::cout << "hip-on-cuda " << p.problem << ": " << status_name(r.status) << " " << r.candidate.median_ms
              << " ms (torch " << r.reference.median_ms << " ms)\n";
  }
}
