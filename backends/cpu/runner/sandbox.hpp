// The runner's confinement: resource limits and seccomp filters (Linux only).
#pragma once
#include <cstdint>
#include <string>

namespace kevolve::cpu {

// No core dumps, a CPU-time limit, no file growth, and death with the parent. Returns "" or an error.
std::string apply_process_limits(int64_t cpu_seconds);

// Caps the data segment at its current size plus `extra_mb` (RLIMIT_DATA; never RLIMIT_AS, which breaks
// GPU runtimes). Returns "" or an error.
std::string limit_data(int64_t extra_mb);

// Stage 1, before the candidate is loaded: forbids process creation and exec, sockets, ptrace, writes to
// files (open for writing, create, rename, unlink, ...), signals to other processes and anonymous
// executable memory. Violations kill the process with SIGSYS. Returns "" or an error.
std::string seccomp_stage1();

// Stage 2, after loading: forbids any new executable mapping (so no library can be loaded later).
std::string seccomp_stage2();

// Checks that every executable mapping of this process belongs to the runner, the candidate or the C/C++
// and OpenMP runtimes. Returns "" or the offending mapping.
std::string check_executable_mappings(const std::string& candidate_path);

// Number of threads of this process.
int count_threads();

}  // namespace kevolve::cpu
