#include "runtime/export/exporter.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "backends/cuda/launch_spec.hpp"
#include "runtime/core/expr.hpp"

namespace kevolve {
namespace {

namespace fs = std::filesystem;

// A shape/launch expression as C++ (int64 arithmetic; min/max through helpers that cannot clash).
std::string cpp_expr(const std::string& e) {
  std::string s = std::regex_replace(e, std::regex(R"(\bmin\s*\()"), "kv_min(");
  return std::regex_replace(s, std::regex(R"(\bmax\s*\()"), "kv_max(");
}

const char* torch_dtype(DType d) {
  switch (d) {
    case DType::float32:
      return "torch::kFloat32";
    case DType::float64:
      return "torch::kFloat64";
    case DType::int32:
      return "torch::kInt32";
    case DType::int64:
      return "torch::kInt64";
    case DType::bfloat16:
      return "torch::kBFloat16";
    case DType::float16:
      return "torch::kFloat16";
  }
  return "torch::kFloat32";
}

const char* kHelpers = R"(static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t kv_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t kv_max(int64_t a, int64_t b) { return a > b ? a : b; }
)";

// C++ statements binding every shape symbol from the inputs' sizes and checking the other dimensions.
// `size(i, d)` is the expression for input i's size in dimension d; `fail(msg)` a statement that reports.
Expected<std::string> bind_symbols(const ProblemSpec& spec, const std::function<std::string(size_t, size_t)>& size,
                                   const std::function<std::string(const std::string&)>& fail,
                                   std::set<std::string>& bound) {
  std::ostringstream bind, check;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const auto& in = spec.inputs[i];
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const std::string& e = in.shape[d];
      if (e == "*") continue;
      if (is_symbol(e) && !bound.count(e)) {
        bind << "  const int64_t " << e << " = " << size(i, d) << ";\n";
        bound.insert(e);
      } else {
        check << "  if (" << size(i, d) << " != (" << cpp_expr(e) << ")) "
              << fail("input '" + in.name + "' dimension " + std::to_string(d) + " must be " + e) << "\n";
      }
    }
  }
  return bind.str() + check.str();
}

std::string py_signature_defaults(const ProblemSpec& s) {
  std::ostringstream o;
  for (auto& p : s.params) o << ", py::arg(\"" << p.name << "\") = " << p.value;
  return o.str();
}

// The torch binding: checks and binds the inputs, allocates the outputs, fills kv_args, calls `call`.
Expected<std::string> torch_binding(const ExportRequest& r, const std::string& call_decl, const std::string& call) {
  const ProblemSpec& s = r.spec;
  const bool cuda = r.backend == "cuda";
  std::ostringstream o;
  o << "// " << s.name << " for PyTorch, exported by kevolve (" << r.provenance << ").\n"
    << "// forward(";
  for (size_t i = 0; i < s.inputs.size(); ++i) o << (i ? ", " : "") << s.inputs[i].name;
  for (auto& p : s.params) o << ", " << p.name << "=" << p.value;
  o << ") -> [";
  for (size_t i = 0; i < s.outputs.size(); ++i) o << (i ? ", " : "") << s.outputs[i].name;
  o << "]\n#include <torch/extension.h>\n";
  if (cuda) o << "#include <ATen/cuda/CUDAContext.h>\n";
  o << "\n#include \"kevolve_kernel.h\"\n\n"
    << call_decl << "\n\nnamespace {\n\n"
    << kHelpers << R"(
kv_tensor kv_describe(const torch::Tensor& t, int32_t dtype) {
  kv_tensor k{};
  k.data = t.data_ptr();
  k.dtype = dtype;
  k.ndim = static_cast<int32_t>(t.dim());
  for (int64_t d = 0; d < t.dim() && d < KV_MAX_DIMS; ++d) { k.shape[d] = t.size(d); k.strides[d] = t.stride(d); }
  return k;
}

}  // namespace

std::vector<torch::Tensor> forward()";
  for (size_t i = 0; i < s.inputs.size(); ++i) o << (i ? ", " : "") << "torch::Tensor " << s.inputs[i].name;
  for (auto& p : s.params) o << ", double " << p.name;
  o << ") {\n";
  for (auto& in : s.inputs) {
    o << "  TORCH_CHECK(" << in.name << ".dim() == " << in.shape.size() << ", \"" << s.name << ": input '" << in.name
      << "' must have " << in.shape.size() << " dimensions, got \", " << in.name << ".dim());\n";
    o << "  TORCH_CHECK(" << in.name << ".scalar_type() == " << torch_dtype(in.dtype) << ", \"" << s.name << ": input '"
      << in.name << "' must be " << dtype_name(in.dtype) << "\");\n";
    o << "  TORCH_CHECK(" << in.name << (cuda ? ".is_cuda()" : ".device().is_cpu()") << ", \"" << s.name << ": input '"
      << in.name << "' must be on the " << (cuda ? "GPU" : "CPU") << "\");\n";
    o << "  " << in.name << " = " << in.name << ".contiguous();\n";
  }
  std::set<std::string> bound;
  auto b = bind_symbols(
      s, [&](size_t i, size_t d) { return s.inputs[i].name + ".size(" + std::to_string(d) + ")"; },
      [&](const std::string& m) { return "TORCH_CHECK(false, \"" + s.name + ": " + m + "\");"; }, bound);
  if (!b) return b;
  o << *b;
  const std::string first = s.inputs.front().name;
  for (auto& out : s.outputs) {
    o << "  auto " << out.name << " = torch::empty({";
    for (size_t d = 0; d < out.shape.size(); ++d) {
      const std::string& e = out.shape[d];
      if (e == "*")
        return Expected<std::string>::failure(
            "output '" + out.name + "' has a data-dependent size ('*'): kevolve export cannot allocate it yet");
      o << (d ? ", " : "") << "static_cast<int64_t>(" << cpp_expr(e) << ")";
    }
    o << "}, " << first << ".options().dtype(" << torch_dtype(out.dtype) << "));\n";
  }
  o << "  std::vector<kv_tensor> in{";
  for (size_t i = 0; i < s.inputs.size(); ++i)
    o << (i ? ", " : "") << "kv_describe(" << s.inputs[i].name << ", " << static_cast<int>(s.inputs[i].dtype) << ")";
  o << "};\n  std::vector<kv_tensor> out{";
  for (size_t i = 0; i < s.outputs.size(); ++i)
    o << (i ? ", " : "") << "kv_describe(" << s.outputs[i].name << ", " << static_cast<int>(s.outputs[i].dtype) << ")";
  o << "};\n  std::vector<double> params{";
  for (size_t i = 0; i < s.params.size(); ++i) o << (i ? ", " : "") << s.params[i].name;
  o << "};\n  kv_args a{in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()), "
       "params.data(),\n"
    << "            static_cast<int32_t>(params.size()), "
    << (cuda ? "at::cuda::getCurrentCUDAStream().stream()" : "nullptr") << "};\n"
    << "  int rc;\n  {\n    pybind11::gil_scoped_release release;\n    rc = " << call << "(&a);\n  }\n"
    << "  TORCH_CHECK(rc == 0, \"" << s.name << ": the kernel returned \", rc);\n  return {";
  for (size_t i = 0; i < s.outputs.size(); ++i) o << (i ? ", " : "") << s.outputs[i].name;
  o << "};\n}\n\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  namespace py = pybind11;\n  m.def(\"forward\", "
       "&forward, \""
    << s.description << "\"";
  for (auto& in : s.inputs) o << ", py::arg(\"" << in.name << "\")";
  o << py_signature_defaults(s) << ");\n}\n";
  return o.str();
}

// The C launcher of a kernel-only CUDA candidate: binds the shape symbols from the descriptors,
// evaluates its launch lines and launches on args->stream. Appended to the kernel source.
Expected<std::string> cuda_launcher(const ExportRequest& r, const std::string& fn) {
  auto l = cuda::parse_launch_spec(r.source);
  if (!l) return Expected<std::string>::failure("the kernel's launch description: " + l.error());
  const ProblemSpec& s = r.spec;
  std::ostringstream o;
  o << "\n// ---- launcher (generated by kevolve export from the // @kevolve lines above) ----\n#include "
       "<cuda_runtime.h>\n"
    << kHelpers << "\nextern \"C\" int " << fn << "(const kv_args* a) {\n"
    << "  if (a->n_inputs != " << s.inputs.size() << " || a->n_outputs != " << s.outputs.size() << ") return 2;\n";
  std::set<std::string> bound;
  auto b = bind_symbols(
      s, [&](size_t i, size_t d) { return "a->inputs[" + std::to_string(i) + "].shape[" + std::to_string(d) + "]"; },
      [](const std::string&) { return std::string("return 3;"); }, bound);
  if (!b) return b;
  o << *b;
  static const std::regex ident(R"([A-Za-z_]\w*)");
  for (auto* part : {&l->grid, &l->block})
    for (auto& e : *part)
      for (std::sregex_iterator it(e.begin(), e.end(), ident), end; it != end; ++it) {
        const std::string sym = it->str();
        if (sym != "cdiv" && sym != "min" && sym != "max" && sym != "SMS" && !bound.count(sym))
          return Expected<std::string>::failure("the launch uses '" + sym + "', which no input dimension gives");
      }
  o << "  int dev = 0, SMS = 1;\n  cudaGetDevice(&dev);\n  cudaDeviceGetAttribute(&SMS, "
       "cudaDevAttrMultiProcessorCount, dev);\n"
    << "  kv_cuda_args k{};\n  k.n_inputs = a->n_inputs;\n  k.n_outputs = a->n_outputs;\n  k.n_params = a->n_params;\n"
    << "  for (int i = 0; i < a->n_inputs && i < KV_MAX_TENSORS; ++i) k.inputs[i] = a->inputs[i];\n"
    << "  for (int i = 0; i < a->n_outputs && i < KV_MAX_TENSORS; ++i) k.outputs[i] = a->outputs[i];\n"
    << "  for (int i = 0; i < a->n_params && i < KV_MAX_PARAMS; ++i) k.params[i] = a->params[i];\n"
    << "  const dim3 grid(static_cast<unsigned>(" << cpp_expr(l->grid[0]) << "), static_cast<unsigned>("
    << cpp_expr(l->grid[1]) << "), static_cast<unsigned>(" << cpp_expr(l->grid[2]) << "));\n"
    << "  const dim3 block(static_cast<unsigned>(" << cpp_expr(l->block[0]) << "), static_cast<unsigned>("
    << cpp_expr(l->block[1]) << "), static_cast<unsigned>(" << cpp_expr(l->block[2]) << "));\n"
    << "  const size_t smem = static_cast<size_t>(" << cpp_expr(l->smem) << ");\n"
    << "  if (smem > 48 * 1024) cudaFuncSetAttribute(" << l->kernel
    << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));\n"
    << "  " << l->kernel << "<<<grid, block, smem, static_cast<cudaStream_t>(a->stream)>>>(k);\n"
    << "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n";
  return o.str();
}

bool write(const fs::path& p, const std::string& text, std::vector<std::string>& made, const fs::path& root) {
  std::ofstream f(p);
  f << text;
  made.push_back(fs::relative(p, root).string());
  return static_cast<bool>(f);
}

// What every format of one export shares: the kernel's source file and what the binding calls in it.
struct Target {
  bool cuda = false;
  std::string module;       // <problem>_kevolve
  std::string kernel_file;  // kernel.cu or kernel.cpp
  std::string kernel_text;  // the candidate, with the launcher for a kernel-only CUDA candidate
  std::string call;         // the extern "C" function the binding calls
  std::string note;         // "Exported by kevolve (provenance)."
};

Expected<Target> target(const ExportRequest& r) {
  Target x;
  x.cuda = r.backend == "cuda";
  x.module = r.spec.name + "_kevolve";
  x.kernel_file = x.cuda ? "kernel.cu" : "kernel.cpp";
  x.kernel_text = r.source;
  x.call = r.spec.entry.empty() ? "kevolve_kernel" : r.spec.entry;
  if (x.cuda && cuda::has_launch_spec(r.source)) {
    x.call = "kevolve_launch";
    auto l = cuda_launcher(r, x.call);
    if (!l) return Expected<Target>::failure(l.error());
    x.kernel_text += *l;
  }
  x.note = "Exported by kevolve (" + r.provenance + ").";
  return x;
}

// USAGE.md of a cuda-source export: how to build the file and call the function.
std::string usage_text(const ExportRequest& r, const Target& x, const std::string& base) {
  std::ostringstream u;
  u << "# " << r.spec.name << "\n\n"
    << r.spec.description << ". " << x.note << "\n\nBuild:\n\n```sh\n"
    << (x.cuda ? "nvcc -O3 -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC -c " + base + "\n"
               : "g++ -O3 -march=native -fopenmp -fPIC -c " + base + "\n")
    << "```\n\nCall `" << x.call << "(&args)` with a `kv_args` (kevolve_kernel.h): inputs ";
  for (size_t i = 0; i < r.spec.inputs.size(); ++i)
    u << (i ? ", " : "") << "`" << r.spec.inputs[i].name << "` " << dtype_name(r.spec.inputs[i].dtype) << "[" <<
        [&] {
          std::string d;
          for (auto& dim : r.spec.inputs[i].shape) d += (d.empty() ? "" : ", ") + dim;
          return d;
        }()
      << "]";
  u << "; outputs ";
  for (size_t i = 0; i < r.spec.outputs.size(); ++i) u << (i ? ", " : "") << "`" << r.spec.outputs[i].name << "`";
  u << "; parameters ";
  for (size_t i = 0; i < r.spec.params.size(); ++i)
    u << (i ? ", " : "") << "`" << r.spec.params[i].name << "` (default " << r.spec.params[i].value << ")";
  if (r.spec.params.empty()) u << "none";
  u << ". Tensors are contiguous, " << (x.cuda ? "on the GPU (device pointers)" : "in host memory")
    << "; outputs are allocated by the caller.\n";
  return u.str();
}

std::vector<std::string> export_source(const ExportRequest& r, const Target& x, const fs::path& out) {
  std::vector<std::string> made;
  const std::string base = r.spec.name + (x.cuda ? ".cu" : ".cpp");
  write(out / base, "// " + r.spec.name + ": " + r.spec.description + ". " + x.note + "\n" + x.kernel_text, made, out);
  write(out / (r.spec.name + ".h"),
        "// " + r.spec.name + ": " + r.spec.description + ". " + x.note +
            "\n#pragma once\n#include \"kevolve_kernel.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
            "// Inputs, outputs and parameters in the order of the problem spec; returns 0 on success." +
            std::string(x.cuda ? " Launches on args->stream." : "") + "\nint " + x.call +
            "(const kv_args* args);\n#ifdef __cplusplus\n}\n#endif\n",
        made, out);
  write(out / "kevolve_kernel.h", r.kernel_header, made, out);
  write(out / "USAGE.md", usage_text(r, x, base), made, out);
  return made;
}

std::string setup_py(const ExportRequest& r, const Target& x) {
  std::ostringstream py;
  py << "# " << r.spec.name << " as a PyTorch extension. " << x.note << "\n# pip install .   then:   import torch, "
     << x.module << "; outputs = " << x.module << ".forward(...)\n"
     << "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, "
     << (x.cuda ? "CUDAExtension" : "CppExtension") << "\n\nsetup(\n    name=\"" << x.module
     << "\",\n    version=\"0.1.0\",\n    ext_modules=[\n        " << (x.cuda ? "CUDAExtension" : "CppExtension")
     << "(\n            \"" << x.module << "\",\n            [\"binding.cpp\", \"" << x.kernel_file << "\"],\n"
     << (x.cuda ? "            extra_compile_args={\"cxx\": [\"-O3\"], \"nvcc\": [\"-O3\", "
                  "\"-gencode=arch=compute_90,code=sm_90\"]},\n"
                : "            extra_compile_args=[\"-O3\", \"-march=native\", \"-fopenmp\"],\n            "
                  "extra_link_args=[\"-fopenmp\"],\n")
     << "        )\n    ],\n    cmdclass={\"build_ext\": BuildExtension},\n)\n";
  return py.str();
}

// CMakeLists.txt of a torch-extension export (the same module as setup.py builds).
std::string cmake_lists(const ExportRequest& r, const Target& x) {
  std::ostringstream cm;
  cm << "# " << r.spec.name << " as a PyTorch extension, built with CMake instead of setup.py:\n"
     << "#   cmake -S . -B build -DCMAKE_PREFIX_PATH=$(python3 -c 'import "
        "torch;print(torch.utils.cmake_prefix_path)') && cmake --build build\n"
     << "cmake_minimum_required(VERSION 3.18)\nproject(" << x.module << " LANGUAGES CXX" << (x.cuda ? " CUDA" : "")
     << ")\n"
     << "find_package(Python3 COMPONENTS Interpreter Development REQUIRED)\nfind_package(Torch REQUIRED)\n"
     << "find_library(TORCH_PYTHON_LIBRARY torch_python PATHS \"${TORCH_INSTALL_PREFIX}/lib\" REQUIRED)\n"
     << (x.cuda ? "set(CMAKE_CUDA_ARCHITECTURES 90)\n" : "find_package(OpenMP REQUIRED)\n") << "Python3_add_library("
     << x.module << " MODULE binding.cpp " << x.kernel_file << ")\n"
     << "target_compile_definitions(" << x.module << " PRIVATE TORCH_EXTENSION_NAME=" << x.module << ")\n"
     << "target_compile_options(" << x.module << " PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O3>)\n"
     << "target_link_libraries(" << x.module << " PRIVATE ${TORCH_LIBRARIES} ${TORCH_PYTHON_LIBRARY}"
     << (x.cuda ? "" : " OpenMP::OpenMP_CXX") << ")\n";
  return cm.str();
}

std::vector<std::string> export_torch_extension(const ExportRequest& r, const Target& x, const std::string& binding,
                                                const fs::path& out) {
  std::vector<std::string> made;
  write(out / x.kernel_file, x.kernel_text, made, out);
  write(out / "binding.cpp", binding, made, out);
  write(out / "kevolve_kernel.h", r.kernel_header, made, out);
  write(out / "setup.py", setup_py(r, x), made, out);
  write(out / "CMakeLists.txt", cmake_lists(r, x), made, out);
  return made;
}

// kernelbench: a ModelNew that builds the same binding with load_inline.
std::vector<std::string> export_kernelbench(const ExportRequest& r, const Target& x, const std::string& binding,
                                            const fs::path& out) {
  std::ostringstream k;
  auto raw = [](const std::string& s) { return "r'''" + s + "'''"; };
  k << "# " << r.spec.name << " as a KernelBench ModelNew. " << x.note << "\n# " << r.spec.description << "\n"
    << "import os\nimport tempfile\n\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
       "load_inline\n\n"
    << "_HEADER = " << raw(r.kernel_header) << "\n\n_KERNEL = " << raw(x.kernel_text)
    << "\n\n_BINDING = " << raw(binding) << "\n\n"
    << "_include = tempfile.mkdtemp(prefix='kevolve-')\nwith open(os.path.join(_include, 'kevolve_kernel.h'), 'w') as "
       "f:\n    f.write(_HEADER)\n"
    << "_ext = load_inline(\n    name='" << x.module << "',\n"
    << (x.cuda ? "    cpp_sources=[_BINDING],\n    cuda_sources=[_KERNEL],\n    extra_cuda_cflags=['-O3', "
                 "'-gencode=arch=compute_90,code=sm_90'],\n"
               : "    cpp_sources=[_KERNEL, _BINDING],\n    extra_cflags=['-O3', '-march=native', '-fopenmp'],\n    "
                 "extra_ldflags=['-fopenmp'],\n")
    << "    extra_include_paths=[_include],\n    verbose=False,\n)\n\n\nclass ModelNew(nn.Module):\n"
    << "    def __init__(self, *args, **kwargs):\n        super().__init__()\n\n    def forward(self";
  for (auto& in : r.spec.inputs) k << ", " << in.name;
  k << "):\n        outs = _ext.forward(";
  for (size_t i = 0; i < r.spec.inputs.size(); ++i) k << (i ? ", " : "") << r.spec.inputs[i].name;
  for (auto& p : r.spec.params) k << ", " << p.value;
  k << ")\n        return outs[0] if len(outs) == 1 else tuple(outs)\n";
  std::vector<std::string> made;
  write(out / (r.spec.name + "_kernelbench.py"), k.str(), made, out);
  return made;
}

}  // namespace

Expected<std::vector<std::string>> export_kernel(const ExportRequest& r) {
  using R = Expected<std::vector<std::string>>;
  if (r.backend != "cpu" && r.backend != "cuda")
    return R::failure("backend '" + r.backend + "' (expected cpu or cuda)");
  if (r.format != "torch-extension" && r.format != "cuda-source" && r.format != "kernelbench")
    return R::failure("format '" + r.format + "' (expected torch-extension, cuda-source or kernelbench)");
  std::error_code ec;
  if (fs::exists(r.out_dir) && !fs::is_empty(r.out_dir, ec)) return R::failure(r.out_dir + " exists and is not empty");
  fs::create_directories(r.out_dir, ec);
  if (ec) return R::failure("cannot create " + r.out_dir + ": " + ec.message());
  const fs::path out(r.out_dir);
  auto x = target(r);
  if (!x) return R::failure(x.error());
  if (r.format == "cuda-source") return export_source(r, *x, out);
  auto binding = torch_binding(r, "extern \"C\" int " + x->call + "(const kv_args* a);", x->call);
  if (!binding) return R::failure(binding.error());
  if (r.format == "torch-extension") return export_torch_extension(r, *x, *binding, out);
  return export_kernelbench(r, *x, *binding, out);
}

}  // namespace kevolve
