// A seccomp allow-list written as a BPF program of its own (no libseccomp: the CUDA runner is built on GPU
// machines that may lack it). Same lists as the CPU runner's filter (syscall_lists.hpp), plus what a GPU
// driver needs once it is up (ioctl, mapping device memory, polling its event descriptors).
#pragma once
#include <string>

namespace kevolve::process {

struct GpuFilterOptions {
  // Opening files for writing: allowed only where the root filesystem is read-only and /tmp private
  // (a mount namespace of its own), else refused.
  bool private_filesystem = false;
  // Mapping files executable (dlopen of the candidate's library): allowed until close_loading() is called.
  bool loading = false;
};

// Installs the filter on the calling process (every thread created later inherits it; call it while the
// process has the threads that should carry it, i.e. before the candidate runs, after the driver is up).
// Forbidden calls (kForbiddenSyscalls, a process without CLONE_THREAD, anonymous executable memory) kill
// the process with SIGSYS; any other call not allowed fails with EPERM and leaves one line on stderr,
// "kevolve-runner: system call N refused by the sandbox". x86-64 only: elsewhere it returns why not.
// Returns "" when in force, else what failed.
std::string install_gpu_runner_filter(const GpuFilterOptions& o);

// After the candidate's library is loaded (with `loading` set above): a second filter, stacked on the
// first, refuses every new executable mapping and executable protection. "" or what failed.
std::string close_loading();

}  // namespace kevolve::process
