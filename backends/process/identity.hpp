// Giving up the evaluator's identity, for the untrusted runners of every backend. Root only: a runner
// that is root enters namespaces of its own and becomes "nobody" before any candidate code exists, so
// that the evaluator (another uid now) cannot be read, traced, signalled, reniced or re-pinned by it,
// and root's files cannot be written. Without root these do nothing (the CPU runner then uses a user
// namespace: backends/cpu/runner/sandbox.cpp).
#pragma once
#include <string>
#include <sys/types.h>

namespace kevolve::process {

constexpr uid_t kNobody = 65534;

// Empty network, IPC and host-name namespaces. True when the kernel allowed them.
bool enter_private_namespaces();

// No supplementary groups, gid and uid nobody's, no capabilities left, no way to gain privileges again
// (no_new_privs). "" on success, else what failed.
std::string become_nobody();

}  // namespace kevolve::process
