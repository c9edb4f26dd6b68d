// FamilyMatch: which kernel-template family a KernelBench-format problem computes, and how the family's
// kernel is fed from the problem's module. Found by the trusted side (backends/python/kevolve_py_match.py),
// used by the offline operator to wrap that family's template kernels as ModelNew candidates.
// FamilyAnalysis: the kernel family of the problem's traced graph and the search space of the kernels generated
// for it (backends/python/kevolve_py_families.py), which the offline operator explores.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kevolve {

struct FamilyMatch {
  std::string family;               // a core problem with a kernel template (softmax_rows, gelu, ...); "" = none
  std::string how;                  // how it was found (or why none was), for people
  std::vector<std::string> inputs;  // per input of the core problem: "arg:I" (forward argument I) or "state:NAME"
  std::vector<std::string> params;  // per scalar of the core problem: "attr:PATH", "value:X" or "default"
  int output_like = 0;              // the forward argument whose shape the output has
  std::vector<int64_t> shape;       // that argument's shape on the problem's own inputs (empty when unknown)
};

}  // namespace kevolve

namespace kevolve {

// One search parameter of a generated family kernel and the values it may take, in the generator's order.
struct FamilyParam {
  std::string name;
  std::vector<std::string> values;  // numbers as the generator wrote them, strings without quotes
  bool text = false;                // the values are strings (quoted when handed back to the generator)
};

// A generator's search space for one backend: its parameters and their default point.
struct FamilySpace {
  std::vector<FamilyParam> params;
  std::map<std::string, std::string> defaults;  // parameter -> value (one of its values)
  const FamilyParam* find(const std::string& name) const {
    for (auto& p : params)
      if (p.name == name) return &p;
    return nullptr;
  }
};

// Which kernel family a KernelBench-format problem's traced graph belongs to, with the generator's search spaces
// (backends/python/kevolve_py_families.py): pointwise, reduction, normalization, softmax, scan, loss, or a
// library op followed by one of them ("conv2d+normalization"). family "" = none, and reason says why.
struct FamilyAnalysis {
  std::string family;  // "" = none
  std::string reason;  // how it was found, or why none was, for people
  std::string graph;   // a short description of the traced graph
  std::string layout;  // pointwise, inner, outer, scan_inner, scan_outer ("" without a family)
  FamilySpace cuda, cpu;
  const FamilySpace& space(const std::string& backend) const { return backend == "cuda" ? cuda : cpu; }
};

}  // namespace kevolve
