// A memory cgroup of its own for an untrusted runner: the one memory bound that also counts shared
// anonymous mappings and a GPU driver's host allocations (RLIMIT_DATA counts neither, and RLIMIT_AS breaks
// the CUDA driver). cgroup v2 (memory.max) or v1 (memory.limit_in_bytes), whichever holds this process's
// memory controller; made beside nothing else, as a child of the process's own memory cgroup.
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace kevolve::process {

// Root, in the runner at start: creates kevolve-runner-<pid> under its memory cgroup, sets the limit to
// `limit_bytes` and moves this process into it. Returns what is in force ("memory cgroup (v1) 6144 MiB")
// or "" with the reason in `why_not` (no memory controller mounted, not writable, not delegated).
std::string enter_memory_cgroup(int64_t limit_bytes, std::string& why_not);

// Evaluator side, once runner `pid` has exited: removes its cgroup (and any other empty kevolve-runner-*
// left by runners whose evaluator died). Does nothing where there is none.
void remove_runner_cgroup(pid_t pid);

// The folder of runner `pid`'s memory cgroup, whether or not it exists ("" without a memory controller).
std::string runner_cgroup_path(pid_t pid);

}  // namespace kevolve::process
