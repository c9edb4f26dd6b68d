// Which hardware interpreter evaluates a search's candidates, and what follows from it. Configs, jobs and
// device registrations carry the backend by its name (a string on the wire and in the store); code asks
// `backend_traits()` instead of comparing names, and `parse_backend()` is the one list of valid names.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kevolve {

enum class BackendKind { cpu, cuda, hip, python, python_cuda, null };

struct BackendTraits {
  BackendKind kind;
  const char* name;      // as written in configs, on the wire and in the store: "python-cuda"
  const char* device;    // where candidates run: "cpu" | "cuda" | "hip" | "" (null: nowhere)
  const char* language;  // the candidate language it evaluates: "cpp" | "cuda" | "hip" | "python" | ""
  bool kernelbench;      // evaluates KernelBench-format ModelNew files (the Python interpreter)
  bool evaluates;        // false for null: synthetic verdicts, the engine measured alone
};

// The traits of every backend, in the order they are listed to users.
const std::vector<BackendTraits>& all_backends();
const BackendTraits& backend_traits(BackendKind k);
// nullopt for a name that is not a backend.
std::optional<BackendKind> parse_backend(std::string_view name);
// The traits of a backend name already checked by parse_backend (config load, registration); an
// unknown name gets the null backend's traits, which evaluate nothing.
const BackendTraits& backend_traits(std::string_view name);
// "cpu, cuda, hip, python, python-cuda or null": for error messages.
std::string backend_names();
// The backend that evaluates a KernelBench-format problem on the device of `b`: cpu -> python,
// cuda -> python-cuda; the Python backends map to themselves, hip and null to themselves (no AMD Python
// interpreter).
BackendKind kernelbench_backend(BackendKind b);
inline bool is_backend(std::string_view name, BackendKind k) { return parse_backend(name) == k; }

}  // namespace kevolve
