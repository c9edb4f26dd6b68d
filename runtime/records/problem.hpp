// ProblemSpec: what a problem is — inputs and how to generate them, outputs, tolerances, shapes, roofline.
// Loaded from problems/<suite>/<name>/problem.toml by runtime/config/problem_loader.hpp.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kevolve {

enum class DType : int32_t { float32 = 0, float64 = 1, int32 = 2, int64 = 3, bfloat16 = 4, float16 = 5 };

const char* dtype_name(DType d);
bool parse_dtype(const std::string& s, DType& out);
int64_t dtype_size(DType d);
bool dtype_is_integer(DType d);

// How the evaluator fills one input; `kind` names a generator, the rest are its numeric / name arguments.
struct GeneratorSpec {
  std::string kind;
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> names;  // references to other inputs (keys = "...", lengths = "...")
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::float32;
  std::vector<std::string> shape;  // per dimension: an expression over shape symbols, or "*" (data-dependent)
  GeneratorSpec generator;         // inputs only
};

struct Param {
  std::string name;
  double value = 0;
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

using ShapeBinding = std::map<std::string, int64_t>;  // symbol -> size, e.g. {T: 4096, H: 4096}

struct ProblemSpec {
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::string reference;  // name of the registered libtorch reference
  std::string naive;      // naive candidate file, relative to dir
  std::string entry = "kevolve_kernel";
  std::vector<Param> params;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::map<DType, Tolerance> tolerances;
  ShapeBinding bench;
  ShapeBinding bench_cuda;  // the GPU benchmark size ([shapes.bench_cuda]; CUDA and HIP); empty: use `bench`
  std::vector<ShapeBinding> verify;
  std::string roofline_bytes;  // expressions over the shape symbols
  std::string roofline_flops;
  std::string dir;   // folder the spec was loaded from
  std::string file;  // the spec file itself

  // The benchmark shape for a backend: bench_cuda on a GPU ("cuda", "hip") when the spec gives one, else bench.
  const ShapeBinding& bench_for(const std::string& backend) const {
    return (backend == "cuda" || backend == "hip") && !bench_cuda.empty() ? bench_cuda : bench;
  }
};

}  // namespace kevolve
