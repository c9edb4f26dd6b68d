// The libtorch references, registered by name (a problem spec's `reference` key). Each is what a user
// would really run: the fused ATen operator where torch has one, else the plainest composition. Shared by
// the CPU and the CUDA evaluators: every reference runs on the device its inputs are on.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace kevolve::reference {

// A reference bound to its inputs: calling it computes the outputs (and is what gets timed).
using BoundReference = std::function<std::vector<at::Tensor>()>;

struct Reference {
  std::string name;
  std::string formula;              // what it computes, as a user would write it in PyTorch
  // Input names, in the order bind() receives them (matched to the spec by name). The same order as the
  // spec's inputs, which is the order a kernel gets them: the reference code shown in a prompt indexes
  // i[k] as the kernel indexes inputs[k] (checked for every problem by test_reference).
  std::vector<std::string> inputs;
  // Binds the op to inputs and params (may do set-up that is not part of the timed op, e.g. building the
  // autograd graph of the forward pass for a backward reference).
  std::function<BoundReference(const std::vector<at::Tensor>&, const std::vector<double>&)> bind;
};

const Reference* find_reference(const std::string& name);
std::vector<std::string> reference_names();

}  // namespace kevolve::reference
