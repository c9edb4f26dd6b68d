// Input generation for the trusted evaluator: the spec's generators, seeded, never trivial data.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::reference {

at::ScalarType to_scalar_type(DType d);

// Makes every input of `spec` for one shape binding from `seed`. Errors name the input and the problem.
Expected<std::vector<at::Tensor>> make_inputs(const ProblemSpec& spec, const ShapeBinding& shape, uint64_t seed);

}  // namespace kevolve::reference
