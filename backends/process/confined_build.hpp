// Runs one compiler (g++, nvcc, hipcc, the NVRTC helper, cuobjdump) on candidate text as an untrusted
// step. A build is attacked through what it reads (`#include "/root/..."`, `.incbin`, /dev/stdin,
// /dev/zero), so it is confined like a runner:
//   root:     a uid of its own (kRunnerIdBase + pid), no capabilities, no_new_privs; new mount, PID,
//             network, IPC and UTS namespaces; a fresh root (tmpfs) that shows only the toolchain
//             read-only (/usr, the merged-usr links, the dynamic linker's /etc files, /opt/rocm*,
//             $CUDA_HOME ...), /dev with null and urandom only, a private /tmp, its own /proc and the
//             build folder (the only writable place, its working directory, TMPDIR and HOME).
//   non-root: the same filesystem through an unprivileged user namespace where the kernel allows one;
//             otherwise only the limits below, and the sandbox line says so.
// Always: stdin /dev/null, an environment reduced to what a compiler needs, rlimits on address space
// and data, CPU time, file size, open files, core files (0) and processes, a wall-clock deadline after
// which every process of the build is killed, and diagnostics bounded in size. Pure POSIX; no CAF, no torch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kevolve::process {

struct BuildLimits {
  int64_t memory_bytes = int64_t{4} << 30;  // RLIMIT_AS and RLIMIT_DATA of every process of the build
  int64_t file_bytes = int64_t{256} << 20;  // RLIMIT_FSIZE: the largest file it may write
  int processes = 64;                       // RLIMIT_NPROC (counts its own uid alone)
  size_t diagnostics_bytes = 64 << 10;      // what of its output is kept
};

struct ConfinedBuild {
  std::vector<std::string> argv;        // argv[0] looked up on PATH inside the confined root
  std::string dir;                      // the build folder: working directory, the only writable place
  std::vector<std::string> read_only;   // further files or folders to show read-only (a helper program)
  std::vector<std::pair<std::string, std::string>> env;  // further variables beyond the reduced set
  double timeout_s = 120;
  BuildLimits limits;
};

struct ConfinedResult {
  int exit_code = -1;      // the compiler's exit status; -1 on timeout, death by a signal or no start
  bool timed_out = false;
  bool started = false;    // false: the sandbox could not be made (the reason is in `output`)
  std::string output;      // stdout + stderr, at most limits.diagnostics_bytes (a note says when cut)
  std::string sandbox;     // "build sandbox: uid N, mount namespace with the toolchain only, ..."
};

// Runs b.argv confined (see above). `b.dir` must exist; for the run it belongs to the build's uid, and
// afterwards (every process of the build gone) to the caller again.
ConfinedResult run_confined(const ConfinedBuild& b);

// True when `path` is a regular file (not a link, device or folder): what the caller may take from a
// build folder the untrusted build has written.
bool regular_file(const std::string& path);
// The first `max_bytes` of the regular file at `path` (opened without following a link); nullopt when
// there is no such file.
std::optional<std::string> read_build_file(const std::string& path, size_t max_bytes);

}  // namespace kevolve::process
