#include "runtime/records/backend_kind.hpp"

namespace kevolve {

const std::vector<BackendTraits>& all_backends() {
  static const std::vector<BackendTraits> table = {
      {BackendKind::cpu, "cpu", "cpu", "cpp", false, true},
      {BackendKind::cuda, "cuda", "cuda", "cuda", false, true},
      {BackendKind::hip, "hip", "hip", "hip", false, true},
      {BackendKind::python, "python", "cpu", "python", true, true},
      {BackendKind::python_cuda, "python-cuda", "cuda", "python", true, true},
      {BackendKind::null, "null", "", "", false, false},
  };
  return table;
}

const BackendTraits& backend_traits(BackendKind k) {
  for (auto& t : all_backends())
    if (t.kind == k) return t;
  return all_backends().back();
}

std::optional<BackendKind> parse_backend(std::string_view name) {
  for (auto& t : all_backends())
    if (name == t.name) return t.kind;
  return std::nullopt;
}

const BackendTraits& backend_traits(std::string_view name) {
  return backend_traits(parse_backend(name).value_or(BackendKind::null));
}

std::string backend_names() {
  std::string s;
  const auto& t = all_backends();
  for (size_t i = 0; i < t.size(); ++i) s += (i == 0 ? "" : i + 1 == t.size() ? " or " : ", ") + std::string(t[i].name);
  return s;
}

BackendKind kernelbench_backend(BackendKind b) {
  switch (b) {
    case BackendKind::cpu:
      return BackendKind::python;
    case BackendKind::cuda:
      return BackendKind::python_cuda;
    default:
      return b;
  }
}

}  // namespace kevolve
