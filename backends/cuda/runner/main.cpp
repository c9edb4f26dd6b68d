// kevolve-cuda-runner: runs ONE CUDA candidate for the trusted evaluator (backends/cuda/runner_protocol.hpp).
// Links no libtorch and never sees evaluator memory except the arena it is handed through CUDA IPC.
// Kernel-only candidates (.cubin) run no candidate host code at all: this program launches them.
// Host-code candidates (.so, built by nvcc with a static cudart) are called with this runner's stream.
// Built for AMD as kevolve-hip-runner (backends/cuda/device_names.hpp): a code object (.hsaco) loaded with
// hipModuleLoadData and launched with hipModuleLaunchKernel, the arena opened through HIP IPC.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/device_names.hpp"
#include "backends/cuda/runner_protocol.hpp"
#include "backends/process/eval_cgroup.hpp"
#include "backends/process/identity.hpp"
#include "backends/process/memory_cgroup.hpp"
#include "backends/process/syscall_filter.hpp"
#include "backends/harness/verify.hpp"
#include "backends/kevolve_kernel.h"

using namespace kevolve;
using namespace kevolve::cuda;

namespace {

std::string cuda_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }
std::string cu_text(CUresult e) {
  const char* n = nullptr;
  const char* s = nullptr;
  cuGetErrorName(e, &n);
  cuGetErrorString(e, &s);
  return std::string(n ? n : kGpuApi) + ": " + (s ? s : "");
}

bool send(const wire::Writer& w) { return wire::write_frame(kReplyFd, w.bytes()); }

bool say_hello(Hello h) {
  wire::Writer w;
  encode(w, h);
  return send(w);
}

// Data-segment limit a little above what the process uses after start-up (the GPU runtime breaks under
// RLIMIT_AS).
void limit_data(int64_t extra_mb) {
  std::ifstream st("/proc/self/status");
  std::string line;
  int64_t kb = 0;
  while (std::getline(st, line))
    if (line.rfind("VmData:", 0) == 0) kb = std::atoll(line.c_str() + 7);
  rlimit r{};
  r.rlim_cur = r.rlim_max = static_cast<rlim_t>(kb * 1024 + extra_mb * (int64_t(1) << 20));
  setrlimit(RLIMIT_DATA, &r);
}

// Root: at start, before CUDA (namespaces and mounts need a process of one thread), empty network, IPC
// and UTS namespaces and a private filesystem (read-only root, private /tmp and /dev/shm, a /proc hiding
// other users). Later, with the device and the arena open, the runner takes a uid of its own without
// capabilities, at most 4096 tasks, and a seccomp allow-list. Not root: no identity change, the filter
// alone, and the level says so.
struct Confinement {
  bool namespaces = false;
  std::string files;      // what the private filesystem has in force, "" when there is none
  std::string no_files;   // why there is none
  std::string memory;     // the memory cgroup in force, "" when there is none
  std::string no_memory;  // why there is none
  std::string cgroup;     // the evaluation's cgroup the evaluator put this runner in, "" when none
  std::string no_cgroup;  // why there is none
};
Confinement g_conf;

void confine_at_start() {
  const char* told = std::getenv(process::kEvalCgroupEnv);
  const std::string cg = told ? told : "none: the evaluator did not say";
  if (cg.rfind("cgroup v", 0) == 0)
    g_conf.cgroup = cg;
  else
    g_conf.no_cgroup = cg.rfind("none: ", 0) == 0 ? cg.substr(6) : cg;
  if (geteuid() != 0) return;
  g_conf.namespaces = process::enter_private_namespaces();
  g_conf.files = process::private_filesystem(g_conf.no_files);
  if (g_conf.cgroup.find(", memory ") != std::string::npos)
    g_conf.memory = g_conf.cgroup;  // the evaluation's cgroup carries the host-memory bound
  else
    g_conf.memory = process::enter_memory_cgroup(kRunnerHostMemoryMb << 20, g_conf.no_memory);
}

// Fills `level`; returns "" or what failed.
std::string give_up_identity(std::string& level, bool loading) {
  if (geteuid() != 0) {
    level = "same uid " + std::to_string(getuid()) + " as the evaluator (not root)";
  } else {
    if (auto e = process::become_runner_user(); !e.empty()) return e;
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the uid change cleared it
    rlimit tasks{4096, 4096};
    setrlimit(RLIMIT_NPROC, &tasks);
    level = "uid " + std::to_string(getuid()) + " (its own) without capabilities, no_new_privs" +
            (g_conf.namespaces ? ", own network + IPC + UTS namespaces (no network)"
                               : ", shared network (unshare refused)") +
            (g_conf.files.empty() ? ", shared filesystem (no mount namespace: " + g_conf.no_files + ")"
                                  : ", " + g_conf.files) +
            (g_conf.memory.empty()
                 ? ", host memory bounded by RLIMIT_DATA only (no memory cgroup: " + g_conf.no_memory + ")"
                 : g_conf.memory == g_conf.cgroup ? "" : ", " + g_conf.memory);
  }
  level += g_conf.cgroup.empty() ? ", no cgroup (" + g_conf.no_cgroup + ")" : ", " + g_conf.cgroup;
  process::GpuFilterOptions f;
  f.private_filesystem = !g_conf.files.empty();
  f.loading = loading;
  if (auto e = process::install_gpu_runner_filter(f); !e.empty()) {
    level += ", no seccomp filter (" + e + ")";
    return {};
  }
  level += std::string(", seccomp allow-list (the GPU driver's calls; files ") +
           (f.private_filesystem ? "written only in the private filesystem" : "opened read-only") +
           (g_conf.cgroup.empty() ? "; new processes refused: clone without CLONE_THREAD kills" : "") + ")";
  return {};
}

class Runner {
 public:
  // Before any candidate exists: the device context, the arena, the stream and the flush buffer (a
  // standby runner stops here until its candidate comes).
  bool prepare(const Setup& s, Hello& h) {
    s_ = s;
    const auto t0 = std::chrono::steady_clock::now();
    cudaError_t e = cudaSetDevice(0);
    if (e == cudaSuccess) e = cudaFree(nullptr);
    if (e != cudaSuccess) return fail(h, no_device(cuda_text(e)), Errc::unavailable);
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    h.device = p.name;
    h.sms = p.multiProcessorCount;
    h.l2_bytes = p.l2CacheSize;
    h.arch = device_arch(p);
    cudaIpcMemHandle_t handle;
    if (s.ipc_handle.size() != sizeof handle) return fail(h, "malformed arena handle");
    std::memcpy(&handle, s.ipc_handle.data(), sizeof handle);
    void* base = nullptr;
    const auto t1 = std::chrono::steady_clock::now();
    if ((e = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess)
      return fail(h, std::string("cannot open the evaluator's arena through ") + kGpuApi + " IPC: " + cuda_text(e));
    base_ = static_cast<char*>(base);
    const auto t2 = std::chrono::steady_clock::now();
    if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess) return fail(h, cuda_text(e));
    if (s.flush_bytes > 0 && (e = cudaMalloc(&flush_, static_cast<size_t>(s.flush_bytes))) != cudaSuccess)
      return fail(h, "L2 flush buffer: " + cuda_text(e));
    // Work on the stream once before the sandbox: a runtime may make its hardware queue, kernel-argument
    // pools and copy engine on first use (HIP does), which needs files and mappings the filter then refuses.
    if (flush_) {
      if ((e = cudaMemsetAsync(flush_, 0, 4, stream_)) == cudaSuccess)
        e = cudaMemcpyAsync(static_cast<char*>(flush_) + 4, flush_, 4, cudaMemcpyDeviceToDevice, stream_);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
      if (e != cudaSuccess) return fail(h, "first work on the runner's stream: " + cuda_text(e));
    }
    const auto secs = [](auto a, auto b) { return std::to_string(std::chrono::duration<double>(b - a).count()); };
    const auto t3 = std::chrono::steady_clock::now();
    h.prepared = "device context " + secs(t0, t1) + " s, arena " + secs(t1, t2) + " s, stream and flush buffer " +
                 secs(t2, t3) + " s";
    h.status = Status::success();
    facts_ = h;
    facts_.prepared.clear();
    return true;
  }

  // The candidate, from its bytes: a host-code library is written to an anonymous memory file first (the
  // runner opens none of the evaluator's files). The identity goes before any candidate code exists in the
  // process (a .so runs its constructors when opened).
  bool load(const Load& l, Hello& h) {
    h = facts_;  // the device facts, and the sandbox in force added below
    h.status = Status::failure(Errc::failed, "the candidate is not loaded");
    if (l.bytes.empty()) return fail(h, "the candidate's file is empty");
    if (l.kind == ArtifactKind::shared_object) {
      if ((so_fd_ = memfd_create("kevolve-candidate.so", MFD_CLOEXEC)) < 0)
        return fail(h, std::string("memfd_create: ") + std::strerror(errno));
      for (size_t done = 0; done < l.bytes.size();) {
        const ssize_t n = write(so_fd_, l.bytes.data() + done, l.bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(h, std::string("writing the candidate to its memory file: ") + std::strerror(errno));
        done += static_cast<size_t>(n);
      }
    }
    if (auto why = give_up_identity(h.sandbox, l.kind != ArtifactKind::cubin); !why.empty())
      return fail(h, "sandbox unavailable on this machine: " + why, Errc::unavailable);
    if (l.kind == ArtifactKind::cubin) {
      image_ = l.bytes;
      CUresult r = cuModuleLoadData(&module_, image_.data());
      if (r != CUDA_SUCCESS)
        return fail(h, "loading the kernel image failed (built for another architecture than " + facts_.arch +
                           "?): " + cu_text(r));
      if ((r = cuModuleGetFunction(&fn_, module_, l.entry.c_str())) != CUDA_SUCCESS)
        return fail(
            h, "the image has no kernel named '" + l.entry + "' (extern \"C\" __global__ expected): " + cu_text(r));
    } else {
      size_t free_before = 0, free_after = 0, total = 0;  // constructors run at dlopen: what they take counts
      cudaMemGetInfo(&free_before, &total);
      lib_ = dlopen(("/proc/self/fd/" + std::to_string(so_fd_)).c_str(), RTLD_NOW | RTLD_LOCAL);
      cudaMemGetInfo(&free_after, &total);
      held_bytes_ = static_cast<int64_t>(free_before) - static_cast<int64_t>(free_after);
      if (!lib_) return fail(h, std::string("dlopen: ") + dlerror());
      if (auto e = process::close_loading(); !e.empty()) return fail(h, "sandbox: " + e);
      host_entry_ = reinterpret_cast<int (*)(const kv_args*)>(dlsym(lib_, l.entry.c_str()));
      if (!host_entry_) return fail(h, "the shared object exports no '" + l.entry + "'");
    }
    h.status = Status::success();
    return true;
  }

  BatchReply run(const Batch& b) {
    BatchReply rep;
    const size_t n = b.calls.size();
    // The device's free memory is read around each batch, not once: between batches the evaluator itself
    // allocates on the same device (inputs, the reference's outputs), which is not the candidate's.
    size_t free_before = 0, total = 0;
    if (host_entry_) cudaMemGetInfo(&free_before, &total);
    std::vector<cudaEvent_t> ev(2 * n);
    for (auto& e : ev) cudaEventCreate(&e);
    rep.calls.resize(n);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n && !rep.fatal; ++i) {
      const Call& c = b.calls[i];
      auto& out = rep.calls[i];
      // Every queued call is checked where it is made: a runtime's last-error slot may keep only the last
      // call's result (HIP 5's does), so an error found only at the end could be lost.
      std::string queued;  // the first queued call that failed, with its error
      if (b.flags & kPoison)
        for (auto& t : c.outputs)
          if (queued.empty()) queued = poison(t);
      if (queued.empty() && (b.flags & kFlush) && flush_)
        if (const cudaError_t e = cudaMemsetAsync(flush_, static_cast<int>(++flushes_ & 0xff),
                                                  static_cast<size_t>(s_.flush_bytes), stream_);
            e != cudaSuccess)
          queued = "the cache flush: " + cuda_text(e);
      if (queued.empty())
        if (const cudaError_t e = cudaEventRecord(ev[2 * i], stream_); e != cudaSuccess)
          queued = "the start event: " + cuda_text(e);
      if (!queued.empty()) {
        fatal(rep, out, queued);
        break;
      }
      if (!(b.flags & kNoLaunch)) out.rc = launch(c, b.params, out.error);
      if (const cudaError_t e = cudaEventRecord(ev[2 * i + 1], stream_); e != cudaSuccess && out.rc == 0) {
        fatal(rep, out, e);
        break;
      }
      if (out.rc != 0) break;
      // The snapshot is queued right behind the end event on the timed stream, so it reads the outputs the
      // moment the candidate's work on this stream is done: work still running elsewhere shows up in it.
      if (!(b.flags & kWall) && (b.flags & kSnapshot))
        for (auto& t : c.outputs)
          if (t.snapshot_offset >= 0 && !rep.fatal)
            if (const cudaError_t e = cudaMemcpyAsync(base_ + t.snapshot_offset, base_ + t.offset,
                                                      static_cast<size_t>(t.bytes), cudaMemcpyDeviceToDevice, stream_);
                e != cudaSuccess)
              fatal(rep, out, e);
      if (rep.fatal) break;
      if (!(b.flags & kWall))
        if (const cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) fatal(rep, out, e);
    }
    if (!rep.fatal && (b.flags & kWall)) {
      const cudaError_t e = cudaDeviceSynchronize();
      rep.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      if (e != cudaSuccess) fatal(rep, rep.calls.back(), e);
    } else if (!rep.fatal) {
      // Whatever the candidate left running elsewhere finishes before the reply: the evaluator then reads
      // its final outputs (the snapshots above were taken before), and no work of this batch overlaps the next.
      if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fatal(rep, rep.calls.back(), e);
    }
    if (!rep.fatal) {
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) fatal(rep, rep.calls.back(), e);
      for (size_t i = 0; i < n && !rep.fatal; ++i) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]) == cudaSuccess)
          rep.calls[i].ns = static_cast<int64_t>(ms * 1e6);
      }
    }
    if (!rep.fatal && host_entry_) {
      size_t free = 0;
      cudaMemGetInfo(&free, &total);
      held_bytes_ += static_cast<int64_t>(free_before) - static_cast<int64_t>(free);
      const int64_t kept_mb = held_bytes_ >> 20;
      if (kept_mb > s_.device_memory_cap_mb) {
        rep.calls.back().rc = -2;
        rep.calls.back().error = "the candidate holds " + std::to_string(kept_mb) +
                                 " MiB of device memory (the cap is " + std::to_string(s_.device_memory_cap_mb) +
                                 " MiB)";
      }
    }
    for (auto& e : ev) cudaEventDestroy(e);
    return rep;
  }

 private:
  bool fail(Hello& h, const std::string& m, Errc code = Errc::failed) {
    h.status = Status::failure(code, m);
    return false;
  }

  static void fatal(BatchReply& rep, CallOutcome& out, cudaError_t e) { fatal(rep, out, cuda_text(e)); }
  static void fatal(BatchReply& rep, CallOutcome& out, const std::string& error) {
    rep.fatal = true;
    out.rc = -1;
    out.error = error;
  }

  // Queues the poison fill of an output; "" or the first error of the calls queued.
  std::string poison(const GpuTensor& t) {
    const DType d = static_cast<DType>(t.dtype);
    const int64_t n = t.bytes / dtype_size(d);
    const uint64_t pat = harness::poison_pattern(d);
    char* const b = base_ + t.offset;
    const CUdeviceptr p = dptr(b);
    CUstream s = reinterpret_cast<CUstream>(stream_);
    auto rt = [](CUresult r) { return r == CUDA_SUCCESS ? std::string() : "the output poison fill: " + cu_text(r); };
    switch (dtype_size(d)) {
      case 2:
        return rt(cuMemsetD16Async(p, static_cast<unsigned short>(pat), static_cast<size_t>(n), s));
      case 4:
        return rt(cuMemsetD32Async(p, static_cast<unsigned int>(pat), static_cast<size_t>(n), s));
      default: {  // 8-byte elements
        const auto lo = static_cast<unsigned int>(pat), hi = static_cast<unsigned int>(pat >> 32);
        if (lo == hi) return rt(cuMemsetD32Async(p, lo, static_cast<size_t>(n) * 2, s));
        // One element written, then doubled by device-to-device copies: the bytes moved once, in log2(n)
        // copies. (A strided 2-D memset handles one row per element: 7 s per 300 calls at 2^24 elements.)
        if (n <= 0) return {};
        CUresult r = cuMemsetD32Async(p, lo, 1, s);
        if (r == CUDA_SUCCESS) r = cuMemsetD32Async(dptr(b + 4), hi, 1, s);
        const size_t total = static_cast<size_t>(n) * 8;
        for (size_t done = 8; done < total && r == CUDA_SUCCESS;) {
          const size_t k = std::min(done, total - done);
          r = cuMemcpyDtoDAsync(dptr(b + done), p, k, s);
          done += k;
        }
        return rt(r);
      }
    }
  }

  // A device address in the driver's type (an integer on CUDA, void* on HIP).
  static CUdeviceptr dptr(char* q) { return reinterpret_cast<CUdeviceptr>(q); }

  static kv_tensor describe(const GpuTensor& t, char* base) {
    kv_tensor k{};
    k.data = base + t.offset;
    k.dtype = t.dtype;
    k.ndim = static_cast<int32_t>(t.shape.size());
    for (size_t i = 0; i < t.shape.size() && i < KV_MAX_DIMS; ++i) {
      k.shape[i] = t.shape[i];
      k.strides[i] = t.strides[i];
    }
    return k;
  }

  int launch(const Call& c, const std::vector<double>& params, std::string& error) {
    if (fn_) {
      kv_cuda_args a{};
      a.n_inputs = static_cast<int32_t>(c.inputs.size());
      a.n_outputs = static_cast<int32_t>(c.outputs.size());
      a.n_params = static_cast<int32_t>(params.size());
      for (size_t i = 0; i < c.inputs.size() && i < KV_MAX_TENSORS; ++i) a.inputs[i] = describe(c.inputs[i], base_);
      for (size_t i = 0; i < c.outputs.size() && i < KV_MAX_TENSORS; ++i) a.outputs[i] = describe(c.outputs[i], base_);
      for (size_t i = 0; i < params.size() && i < KV_MAX_PARAMS; ++i) a.params[i] = params[i];
      const Launch& l = c.launch;
      // The opt-in is asked for any dynamic size: beyond 48 KB of static and dynamic shared memory together a
      // launch fails without it, however the two are split.
      if (l.smem > 0 && l.smem != smem_set_) {
        if (const CUresult r =
                cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(l.smem));
            r != CUDA_SUCCESS) {
          error = "the launch asks for " + std::to_string(l.smem) +
                  " bytes of dynamic shared memory, more than this kernel may have on this device: " + cu_text(r);
          return -3;
        }
        smem_set_ = l.smem;
      }
      void* args[] = {&a};
      const CUresult r = cuLaunchKernel(
          fn_, static_cast<unsigned>(l.grid[0]), static_cast<unsigned>(l.grid[1]), static_cast<unsigned>(l.grid[2]),
          static_cast<unsigned>(l.block[0]), static_cast<unsigned>(l.block[1]), static_cast<unsigned>(l.block[2]),
          static_cast<unsigned>(l.smem), reinterpret_cast<CUstream>(stream_), args, nullptr);
      if (r != CUDA_SUCCESS) {
        std::ostringstream os;
        os << "launch <<<(" << l.grid[0] << "," << l.grid[1] << "," << l.grid[2] << "), (" << l.block[0] << ","
           << l.block[1] << "," << l.block[2] << "), " << l.smem << ">>> failed: " << cu_text(r);
        error = os.str();
        return -3;
      }
      return 0;
    }
    std::vector<kv_tensor> in, out;
    for (auto& t : c.inputs) in.push_back(describe(t, base_));
    for (auto& t : c.outputs) out.push_back(describe(t, base_));
    kv_args a{in.data(),     static_cast<int32_t>(in.size()),     out.data(), static_cast<int32_t>(out.size()),
              params.data(), static_cast<int32_t>(params.size()), stream_};
    const int rc = host_entry_(&a);
    if (rc != 0) error = "the kernel returned " + std::to_string(rc);
    return rc;
  }

  Setup s_;
  Hello facts_;        // what prepare() found: the device's name, SMs, L2 and sm_XY
  std::string image_;  // a kernel image's bytes
  int so_fd_ = -1;     // a host-code library's memory file
  char* base_ = nullptr;
  void* flush_ = nullptr;
  uint64_t flushes_ = 0;
  cudaStream_t stream_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  int64_t smem_set_ = 0;
  void* lib_ = nullptr;
  int (*host_entry_)(const kv_args*) = nullptr;
  int64_t held_bytes_ = 0;  // device memory a host-code candidate took and kept, summed over its batches
};

}  // namespace

int main(int argc, char**) {
  if (argc > 1) {
    std::fprintf(stderr, "%s is started by %s; it takes no arguments\n", kRunnerName, kEvaluatorName);
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  rlimit core{0, 0};
  setrlimit(RLIMIT_CORE, &core);
  auto frame = wire::read_frame(kCommandFd);
  if (!frame) return 1;
  Setup s;
  try {
    wire::Reader r(*frame);
    decode(r, s);
  } catch (const wire::DecodeError&) { return 1; }
  Runner runner;
  confine_at_start();
  Hello ready;
  const bool prepared = runner.prepare(s, ready);
  if (!say_hello(ready) || !prepared) return prepared ? 1 : 0;
  auto load_frame = wire::read_frame(kCommandFd);
  if (!load_frame) return 0;  // a standby runner that was not needed
  Load l;
  try {
    wire::Reader r(*load_frame);
    decode(r, l);
  } catch (const wire::DecodeError&) { return 1; }
  Hello h;
  const bool ok = runner.load(l, h);
  if (ok) limit_data(4096);
  if (!say_hello(h) || !ok) return ok ? 1 : 0;
  while (auto f = wire::read_frame(kCommandFd)) {
    Batch b;
    try {
      wire::Reader r(*f);
      decode(r, b);
    } catch (const wire::DecodeError&) { return 1; }
    const BatchReply rep = runner.run(b);
    wire::Writer w;
    encode(w, rep);
    if (!send(w) || rep.fatal) return 0;
  }
  return 0;
}
