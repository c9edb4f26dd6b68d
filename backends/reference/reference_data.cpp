#include "backends/reference/reference_data.hpp"

#include <exception>

#include "backends/reference/generators.hpp"

namespace kevolve::reference {

std::vector<at::Tensor> in_reference_order(const ProblemSpec& spec, const Reference& ref,
                                           const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  for (auto& name : ref.inputs)
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      if (spec.inputs[i].name == name) out.push_back(inputs[i]);
  return out;
}

std::optional<DataFailure> make_trial_data(const ProblemSpec& spec, const Reference& ref,
                                           const std::vector<double>& params, const ShapeBinding& shape,
                                           uint64_t seed, at::Device device, std::vector<at::Tensor>& inputs,
                                           std::vector<at::Tensor>& expected) {
  auto made = make_inputs(spec, shape, seed, device);
  if (!made) return DataFailure{"generator", made.error()};
  inputs = std::move(*made);
  std::vector<at::Tensor> clones = in_reference_order(spec, ref, inputs);
  for (auto& t : clones) t = t.clone();
  try {
    for (auto& t : ref.bind(clones, params)()) expected.push_back(t.detach().to(device).contiguous());
  } catch (const std::exception& e) {
    return DataFailure{"reference", "the reference '" + spec.reference + "' failed" +
                                        (device.is_cpu() ? std::string() : " on the GPU") + ": " + e.what()};
  }
  if (expected.size() != spec.outputs.size())
    return DataFailure{"reference", "the reference returned " + std::to_string(expected.size()) +
                                        " outputs, the spec declares " + std::to_string(spec.outputs.size())};
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i].scalar_type() != to_scalar_type(spec.outputs[i].dtype))
      expected[i] = expected[i].to(to_scalar_type(spec.outputs[i].dtype));
  return std::nullopt;
}

}  // namespace kevolve::reference
