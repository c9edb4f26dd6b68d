// One trial's data, made the same way by every torch-side evaluator (CPU and CUDA): inputs drawn by the
// spec's generators on a device, and the reference's outputs on clones of them (the reference never sees
// the evaluator's originals), in the spec's output dtypes.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/reference/references.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve::reference {

// What stopped a trial's data from being made: the part at fault ("generator" or "reference") and why.
struct DataFailure {
  std::string part, message;
};

// `inputs` in the order `ref` takes them (matched to the spec's inputs by name): the same tensors, no copy.
std::vector<at::Tensor> in_reference_order(const ProblemSpec& spec, const Reference& ref,
                                           const std::vector<at::Tensor>& inputs);

// Fills `inputs` (spec order, on `device`) for `shape` and `seed`, and `expected` with the reference's
// outputs on clones of them (contiguous, on `device`, in the spec's dtypes). Nothing on success.
std::optional<DataFailure> make_trial_data(const ProblemSpec& spec, const Reference& ref,
                                           const std::vector<double>& params, const ShapeBinding& shape,
                                           uint64_t seed, at::Device device, std::vector<at::Tensor>& inputs,
                                           std::vector<at::Tensor>& expected);

}  // namespace kevolve::reference
