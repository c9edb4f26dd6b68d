// Input generation for the trusted evaluator: the spec's generators, seeded, never trivial data.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::reference {

at::ScalarType to_scalar_type(DType d);
// The DType of a torch scalar type (float32 for any type the specs do not use).
DType dtype_from(at::ScalarType s);

// Makes every input of `spec` for one shape binding from `seed`. Errors name the input and the problem.
// With `device` a GPU, the tensors are made there by that device's generator (seeded from `seed`): the same
// distributions, other values than on the CPU, and no host copy of a bench-size input is ever made; the
// segment_sorted generator (a sort per segment) still runs on the CPU and its result is moved.
Expected<std::vector<at::Tensor>> make_inputs(const ProblemSpec& spec, const ShapeBinding& shape, uint64_t seed,
                                              at::Device device = at::kCPU);

}  // namespace kevolve::reference
