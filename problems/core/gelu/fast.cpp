// gelu, fast: OpenMP-parallel, vectorised loop with a branch-free rational erf approximation
// (odd degree-13 / even degree-8 polynomials in x, input clamped to [-4, 4], where erf(x) rounds to
// +-1 in float; the form used by Eigen/XLA, max abs error 4.4e-7 on [-4, 4]). No libm calls in the hot loop.
#include "kevolve_kernel.h"

namespace {
#pragma omp declare simd notinbranch
inline float verf(float x) {
  x = x > 4.0f ? 4.0f : x;
  x = x < -4.0f ? -4.0f : x;
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p = p * x;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return p / q;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const float* __restrict x = static_cast<const float*>(a->inputs[0].data);
  float* __restrict y = static_cast<float*>(a->outputs[0].data);
  const int64_t N = kv_numel(&a->inputs[0]);
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float v = x[i];
    const float g = 0.5f * v * (1.0f + verf(v * 0.70710678118654752f));
    // Far negative tail: the true value is below 1e-8 in magnitude, while the clamped erf's residual
    // error would grow linearly with |x|; return 0 there.
    y[i] = v < -5.75f ? 0.0f : g;
  }
  return 0;
}
