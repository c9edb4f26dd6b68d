// Kernel templates of the knowledge base (knowledge/templates/<backend>/<problem>/): a mustache source
// and a declared parameter space with constraints. Loading validates everything and names the file/key.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/node.hpp"

namespace kevolve {

struct ParamDef {
  std::string name;
  std::vector<std::string> values;  // ordered; neighbours in this list are "one step" apart
  bool numeric = false;
  size_t default_index = 0;
};

struct KernelTemplate {
  std::string problem, backend, description;
  std::string source;  // mustache text
  std::vector<ParamDef> params;
  std::vector<std::string> constraints;  // "unroll * vec <= 64"
  // Constraints over parameters and hardware numbers ("vec * 4 <= vector_width_bytes"); one that names a
  // number the target does not give is not applied.
  std::vector<std::string> hardware_constraints;
  std::map<std::string, int64_t> hardware;     // the target's numbers (HardwareProfile::numbers)
  std::map<std::string, std::string> context;  // extra values every rendering sees (e.g. problem_source)
  std::string dir;

  Params defaults() const;
  // "" when p satisfies every constraint, else the first violated constraint.
  std::string violated(const Params& p) const;
  // Renders the source for p (every parameter must be set).
  Expected<std::string> render(const Params& p) const;
};

Expected<KernelTemplate> load_template(const std::string& dir);
// knowledge/templates/<backend>/<problem> under the given knowledge roots.
Expected<KernelTemplate> find_template(const std::string& backend, const std::string& problem,
                                       const std::vector<std::string>& roots);
std::vector<std::string> default_knowledge_roots();

}  // namespace kevolve
