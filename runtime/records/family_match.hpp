// FamilyMatch: which kernel-template family a KernelBench-format problem computes, and how the family's
// kernel is fed from the problem's module. Found by the trusted side (backends/python/kevolve_py_match.py),
// used by the offline operator to wrap that family's template kernels as ModelNew candidates.
#pragma once
#include <cstdint>
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
