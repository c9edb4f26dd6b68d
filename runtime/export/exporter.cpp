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
  const std::string module = r.spec.name + "_kevolve";
  const bool cuda = r.backend == "cuda";
  const bool kernel_only = cuda && cuda::has_launch_spec(r.source);
  const std::string entry = r.spec.entry.empty() ? "kevolve_kernel" : r.spec.entry;
  // What the binding calls, and the source file that defines it.
  std::string kernel_file = cuda ? "kernel.cu" : "kernel.cpp", kernel_text = r.source, call = entry;
  if (kernel_only) {
    call = "kevolve_launch";
    auto l = cuda_launcher(r, call);
    if (!l) return R::failure(l.error());
    kernel_text += *l;
  }
  const std::string decl = "extern \"C\" int " + call + "(const kv_args* a);";
  std::vector<std::string> made;
  const std::string note = "Exported by kevolve (" + r.provenance + ").";

  if (r.format == "cuda-source") {
    const std::string base = r.spec.name + (cuda ? ".cu" : ".cpp");
    write(out / base, "// " + r.spec.name + ": " + r.spec.description + ". " + note + "\n" + kernel_text, made, out);
    write(out / (r.spec.name + ".h"),
          "// " + r.spec.name + ": " + r.spec.description + ". " + note +
              "\n#pragma once\n#include \"kevolve_kernel.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
              "// Inputs, outputs and parameters in the order of the problem spec; returns 0 on success." +
              std::string(cuda ? " Launches on args->stream." : "") + "\nint " + call +
              "(const kv_args* args);\n#ifdef __cplusplus\n}\n#endif\n",
          made, out);
    write(out / "kevolve_kernel.h", r.kernel_header, made, out);
    std::ostringstream u;
    u << "# " << r.spec.name << "\n\n"
      << r.spec.description << ". " << note << "\n\nBuild:\n\n```sh\n"
      << (cuda ? "nvcc -O3 -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC -c " + base + "\n"
               : "g++ -O3 -march=native -fopenmp -fPIC -c " + base + "\n")
      << "```\n\nCall `" << call << "(&args)` with a `kv_args` (kevolve_kernel.h): inputs ";
    for (size_t i = 0; i < r.spec.inputs.size(); ++i)
      u << (i ? ", " : "") << "`" << r.spec.inputs[i].name << "` " << dtype_name(r.spec.inputs[i].dtype) << "[" <<
          [&] {
            std::string d;
            for (auto& x : r.spec.inputs[i].shape) d += (d.empty() ? "" : ", ") + x;
            return d;
          }()
        << "]";
    u << "; outputs ";
    for (size_t i = 0; i < r.spec.outputs.size(); ++i) u << (i ? ", " : "") << "`" << r.spec.outputs[i].name << "`";
    u << "; parameters ";
    for (size_t i = 0; i < r.spec.params.size(); ++i)
      u << (i ? ", " : "") << "`" << r.spec.params[i].name << "` (default " << r.spec.params[i].value << ")";
    if (r.spec.params.empty()) u << "none";
    u << ". Tensors are contiguous, " << (cuda ? "on the GPU (device pointers)" : "in host memory")
      << "; outputs are allocated by the caller.\n";
    write(out / "USAGE.md", u.str(), made, out);
    return made;
  }

  auto binding = torch_binding(r, decl, call);
  if (!binding) return R::failure(binding.error());

  if (r.format == "torch-extension") {
    write(out / kernel_file, kernel_text, made, out);
    write(out / "binding.cpp", *binding, made, out);
    write(out / "kevolve_kernel.h", r.kernel_header, made, out);
    std::ostringstream py;
    py << "# " << r.spec.name << " as a PyTorch extension. " << note << "\n# pip install .   then:   import torch, "
       << module << "; outputs = " << module << ".forward(...)\n"
       << "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, "
       << (cuda ? "CUDAExtension" : "CppExtension") << "\n\nsetup(\n    name=\"" << module
       << "\",\n    version=\"0.1.0\",\n    ext_modules=[\n        " << (cuda ? "CUDAExtension" : "CppExtension")
       << "(\n            \"" << module << "\",\n            [\"binding.cpp\", \"" << kernel_file << "\"],\n"
       << (cuda ? "            extra_compile_args={\"cxx\": [\"-O3\"], \"nvcc\": [\"-O3\", "
                  "\"-gencode=arch=compute_90,code=sm_90\"]},\n"
                : "            extra_compile_args=[\"-O3\", \"-march=native\", \"-fopenmp\"],\n            "
                  "extra_link_args=[\"-fopenmp\"],\n")
       << "        )\n    ],\n    cmdclass={\"build_ext\": BuildExtension},\n)\n";
    write(out / "setup.py", py.str(), made, out);
    std::ostringstream cm;
    cm << "# " << r.spec.name << " as a PyTorch extension, built with CMake instead of setup.py:\n"
       << "#   cmake -S . -B build -DCMAKE_PREFIX_PATH=$(python3 -c 'import "
          "torch;print(torch.utils.cmake_prefix_path)') && cmake --build build\n"
       << "cmake_minimum_required(VERSION 3.18)\nproject(" << module << " LANGUAGES CXX" << (cuda ? " CUDA" : "")
       << ")\n"
       << "find_package(Python3 COMPONENTS Interpreter Development REQUIRED)\nfind_package(Torch REQUIRED)\n"
       << "find_library(TORCH_PYTHON_LIBRARY torch_python PATHS \"${TORCH_INSTALL_PREFIX}/lib\" REQUIRED)\n"
       << (cuda ? "set(CMAKE_CUDA_ARCHITECTURES 90)\n" : "find_package(OpenMP REQUIRED)\n") << "Python3_add_library("
       << module << " MODULE binding.cpp " << kernel_file << ")\n"
       << "target_compile_definitions(" << module << " PRIVATE TORCH_EXTENSION_NAME=" << module << ")\n"
       << "target_compile_options(" << module << " PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O3>)\n"
       << "target_link_libraries(" << module << " PRIVATE ${TORCH_LIBRARIES} ${TORCH_PYTHON_LIBRARY}"
       << (cuda ? "" : " OpenMP::OpenMP_CXX") << ")\n";
    write(out / "CMakeLists.txt", cm.str(), made, out);
    return made;
  }

  // kernelbench: a ModelNew that builds the same binding with load_inline.
  std::ostringstream k;
  auto raw = [](const std::string& s) { return "r'''" + s + "'''"; };
  k << "# " << r.spec.name << " as a KernelBench ModelNew. " << note << "\n# " << r.spec.description << "\n"
    << "import os\nimport tempfile\n\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
       "load_inline\n\n"
    << "_HEADER = " << raw(r.kernel_header) << "\n\n_KERNEL = " << raw(kernel_text)
    << "\n\n_BINDING = " << raw(*binding) << "\n\n"
    << "_include = tempfile.mkdtemp(prefix='kevolve-')\nwith open(os.path.join(_include, 'kevolve_kernel.h'), 'w') as "
       "f:\n    f.write(_HEADER)\n"
    << "_ext = load_inline(\n    name='" << module << "',\n"
    << (cuda ? "    cpp_sources=[_BINDING],\n    cuda_sources=[_KERNEL],\n    extra_cuda_cflags=['-O3', "
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
  write(out / (r.spec.name + "_kernelbench.py"), k.str(), made, out);
  return made;
}

}  // namespace kevolve
