// Giving up the evaluator's identity, for the untrusted runners of every backend. Root only: a runner
// that is root enters namespaces of its own and takes a uid of its own (runner_uid) before any candidate code exists, so
// that the evaluator (another uid now) cannot be read, traced, signalled, reniced or re-pinned by it,
// and root's files cannot be written. Without root these do nothing (the CPU runner then uses a user
// namespace: backends/cpu/runner/sandbox.cpp).
#pragma once
#include <string>
#include <sys/types.h>

namespace kevolve::process {

constexpr uid_t kNobody = 65534;

// A confined runner's uid and gid: one of its own, kRunnerIdBase + its pid (unique among the machine's live
// processes; no file and no user of the machine has it). Two runners then cannot signal, trace, renice or
// read each other either, and per-uid limits (RLIMIT_NPROC) count one runner alone.
constexpr uid_t kRunnerIdBase = 2000000000;
uid_t runner_uid();

// Empty network, IPC and host-name namespaces. True when the kernel allowed them.
bool enter_private_namespaces();

// A mount namespace of its own in which the root filesystem is read-only, /tmp and /dev/shm are private
// size-limited tmpfs (the only writable places), and /proc hides the processes of other users. (No PID
// namespace: as its first process the runner would ignore its own abort() and similar signals.) Needs
// root (call before become_runner_user). Returns what is in force, for the sandbox level, each step that failed
// named; "" when there is no private filesystem at all, with the reason in `why_not` (nothing is mounted
// unless the mounts could be made private first: they would reach the evaluator's namespace).
std::string private_filesystem(std::string& why_not);

// No supplementary groups, gid and uid runner_uid(), no capabilities left, no way to gain privileges again
// (no_new_privs). "" on success, else what failed.
std::string become_runner_user();

}  // namespace kevolve::process
