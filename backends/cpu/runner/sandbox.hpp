// The runner's confinement: resource limits and seccomp filters (Linux only).
#pragma once
#include <cstdint>
#include <string>

#include "backends/process/identity.hpp"

namespace kevolve::cpu {

// No core dumps, a CPU-time limit, no file growth, and death with the parent. Returns "" or an error.
std::string apply_process_limits(int64_t cpu_seconds);

// The uid the runner takes in a user namespace when not root ("nobody" inside, the evaluator's outside).
constexpr unsigned kNobody = process::kNobody;

// Gives up the evaluator's identity before any candidate code exists in the process: as root, empty
// network/IPC/UTS namespaces and uid/gid nobody without capabilities; otherwise a user namespace with
// the same effect where the machine allows one. `level` says what is in force (it goes into every
// verdict); "" on success, else why it failed (the runner then refuses to run the candidate).
std::string drop_identity(std::string& level);

// Caps the data segment at its current size plus `extra_mb` (RLIMIT_DATA) and the address space at its
// current size plus `extra_mb` and 1 GiB for thread stacks and arenas (RLIMIT_AS: shared anonymous
// memory counts too). CPU runners only: a GPU runtime needs a cgroup limit instead. "" or an error.
std::string limit_memory(int64_t extra_mb);

// At most `max_tasks` processes + threads for this uid (RLIMIT_NPROC). "" or an error.
std::string limit_threads(int64_t max_tasks);

// Stage 1, before the candidate is loaded: an allow-list (anything unnamed fails with EPERM). Process
// creation and exec, sockets, ptrace, signals to others, writes to files, io_uring, mknod, xattrs,
// scheduling of others, anonymous executable memory and the like kill the process with SIGSYS.
// Returns "" or an error.
std::string seccomp_stage1();

// Stage 2, after loading: forbids any new executable mapping (so no library can be loaded later).
std::string seccomp_stage2();

// Checks that every executable mapping of this process belongs to the runner, the candidate or the C/C++
// and OpenMP runtimes. Returns "" or the offending mapping.
std::string check_executable_mappings(const std::string& candidate_path, int candidate_fd);

// Number of threads of this process.
int count_threads();

}  // namespace kevolve::cpu
