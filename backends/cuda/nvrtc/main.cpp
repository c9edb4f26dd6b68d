// kevolve-nvrtc: compiles one kernel-only CUDA candidate with NVRTC into a cubin for a real architecture
// (never PTX-only). Runs as a child of the compile farm, so a compiler crash on hostile source takes down
// only this process. libnvrtc is opened at run time: kevolve builds and runs on machines without CUDA,
// and this tool says so clearly there.
//
//   kevolve-nvrtc --arch sm_90 --out FILE.cubin SOURCE.cu
//   exit 0: compiled (log on stdout: warnings and the ptxas resource report)
//   exit 1: compile error (log on stdout)   exit 3: NVRTC not found   exit 2: bad usage
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
#include "kevolve_kernel_header.inc"  // kKernelHeader: backends/kevolve_kernel.h

using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(Program, int, const char* const*);
  int (*log_size)(Program, size_t*);
  int (*log)(Program, char*);
  int (*cubin_size)(Program, size_t*);
  int (*cubin)(Program, char*);
  int (*destroy)(Program*);
  const char* (*error)(int);
  int (*version)(int*, int*);
};

void* open_nvrtc(std::string& tried) {
  std::vector<std::string> names;
  if (const char* p = std::getenv("KEVOLVE_NVRTC")) names.push_back(p);
  for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) names.push_back(n);
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(env)) names.push_back(std::string(h) + "/lib64/libnvrtc.so");
  names.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  for (auto& n : names) {
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    tried += (tried.empty() ? "" : ", ") + n;
  }
  return nullptr;
}

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

int usage() {
  std::fprintf(stderr, "usage: kevolve-nvrtc --arch sm_XY --out FILE.cubin SOURCE.cu\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch, out, src;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--arch" && i + 1 < argc)
      arch = argv[++i];
    else if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (!a.empty() && a[0] != '-' && src.empty())
      src = a;
    else
      return usage();
  }
  if (arch.rfind("sm_", 0) != 0 || out.empty() || src.empty()) return usage();
  std::ifstream in(src);
  if (!in) {
    std::printf("cannot read %s\n", src.c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string tried;
  void* lib = open_nvrtc(tried);
  if (!lib) {
    std::printf(
        "NVRTC is not available on this machine (tried %s): the cuda backend needs the CUDA toolkit's libnvrtc "
        "(set KEVOLVE_NVRTC to its path)\n",
        tried.c_str());
    return 3;
  }
  Nvrtc n{};
  if (!bind(lib, "nvrtcCreateProgram", n.create) || !bind(lib, "nvrtcCompileProgram", n.compile) ||
      !bind(lib, "nvrtcGetProgramLogSize", n.log_size) || !bind(lib, "nvrtcGetProgramLog", n.log) ||
      !bind(lib, "nvrtcGetCUBINSize", n.cubin_size) || !bind(lib, "nvrtcGetCUBIN", n.cubin) ||
      !bind(lib, "nvrtcDestroyProgram", n.destroy) || !bind(lib, "nvrtcGetErrorString", n.error) ||
      !bind(lib, "nvrtcVersion", n.version)) {
    std::printf("the NVRTC library found lacks nvrtcGetCUBIN (CUDA 11.1 or newer is needed)\n");
    return 3;
  }
  int major = 0, minor = 0;
  n.version(&major, &minor);
  Program p = nullptr;
  const char* headers[] = {kKernelHeader};
  const char* names[] = {"kevolve_kernel.h"};
  if (int rc = n.create(&p, text.str().c_str(), "candidate.cu", 1, headers, names); rc != 0) {
    std::printf("nvrtcCreateProgram: %s\n", n.error(rc));
    return 1;
  }
  const std::string gpu = "--gpu-architecture=" + arch;
  std::vector<std::string> opts = {gpu, "--std=c++17", "--ptxas-options=-v", "-lineinfo"};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(env)) opts.push_back(std::string("-I") + h + "/include");
  opts.push_back("-I/usr/local/cuda/include");
  std::vector<const char*> o;
  for (auto& s : opts) o.push_back(s.c_str());
  const int rc = n.compile(p, static_cast<int>(o.size()), o.data());
  size_t ls = 0;
  n.log_size(p, &ls);
  std::string log(ls, '\0');
  if (ls) n.log(p, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  std::printf("NVRTC %d.%d, %s\n%s\n", major, minor, gpu.c_str(), log.c_str());
  if (rc != 0) {
    std::printf("compilation failed: %s\n", n.error(rc));
    n.destroy(&p);
    return 1;
  }
  size_t cs = 0;
  n.cubin_size(p, &cs);
  std::string cubin(cs, '\0');
  if (cs == 0 || n.cubin(p, cubin.data()) != 0) {
    std::printf("NVRTC produced no cubin for %s\n", arch.c_str());
    n.destroy(&p);
    return 1;
  }
  n.destroy(&p);
  std::ofstream(out, std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  return 0;
}
