// EvalCgroup: one cgroup per evaluation (a runner spawn, or a confined build), made by the trusted side
// as root, so that every process a candidate ever starts — double-forked, setsid'ed, or cloned with
// CLONE_PARENT so that its parent is the evaluator — is inside it: pids.max bounds their number, a memory
// limit their memory, the freezer stops all of them while the evaluator times something else, and the
// evaluation ends by killing the whole cgroup and checking that it is empty.
// cgroup v2 where the process's cgroup2 hierarchy holds the controllers (or no v1 freezer is mounted), v1
// otherwise (pids, freezer and memory hierarchies, each mounted on its own). Pure C++: no CAF, no torch.
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "runtime/core/expected.hpp"

namespace kevolve::process {

// The variable through which RunnerProcess tells a runner its cgroup: describe() ("cgroup v1 kevolve-eval-..."),
// or "none: <why>" where none could be made (the runner's seccomp filter then is what refuses new processes).
inline constexpr const char* kEvalCgroupEnv = "KEVOLVE_EVAL_CGROUP";

struct CgroupLimits {
  int64_t memory_bytes = 0;  // 0: no memory limit
  int64_t pids_max = 0;      // 0: no pids.max (threads count as pids)
};

class EvalCgroup {
 public:
  // Creates kevolve-<tag>-<pid>-<n> under this process's own cgroup (per hierarchy in v1), sets the limits.
  // On failure the error says why none could be made (not root, no cgroup mounted, not delegated).
  static Expected<EvalCgroup> create(const std::string& tag, const CgroupLimits& limits);

  EvalCgroup(EvalCgroup&& o) noexcept;
  EvalCgroup& operator=(EvalCgroup&& o) noexcept;
  EvalCgroup(const EvalCgroup&) = delete;
  EvalCgroup& operator=(const EvalCgroup&) = delete;
  // Kills what is left inside and removes the cgroup.
  ~EvalCgroup();

  // For the child between fork and exec: async-signal-safe (pre-opened fds, write(2) only). Moves the
  // calling process into the cgroup in every hierarchy. 0, or the errno of the first write that failed.
  int enter_from_child() const;
  // Moves process `pid` (all its threads) in, from outside. True when every hierarchy took it.
  bool adopt(pid_t pid) const;

  // Stops every process inside and waits (bounded, 2 s) until the kernel says all are frozen.
  bool freeze();
  bool thaw();
  bool frozen() const { return frozen_; }
  // Kills every process inside and waits (bounded, 5 s) until it is empty; those ever seen inside (frozen
  // or killed) that were this process's children are reaped: wait for your own child first. True when empty.
  bool kill_all();
  // The pids inside it and inside any cgroup made within it (read from the kernel; empty when none).
  std::vector<pid_t> pids() const;
  bool empty() const { return pids().empty(); }
  // kill_all, then rmdir of every hierarchy's folder (and of cgroups made inside). True when all are gone.
  bool remove();

  // "cgroup v1 kevolve-eval-1234-1 (pids.max 256, memory 6144 MiB, freezer)"; no memory part where none was asked.
  std::string describe() const;
  const std::string& name() const { return name_; }
  int version() const { return version_; }
  int64_t memory_bytes() const { return memory_bytes_; }
  // The folders, one per hierarchy (v2: one).
  const std::vector<std::string>& folders() const { return folders_; }

 private:
  EvalCgroup() = default;
  void close_fds();

  int version_ = 0;
  std::string name_;
  std::vector<std::string> folders_;  // every folder made, removed in reverse order
  std::string procs_;                 // the cgroup.procs listing membership (v2: the one; v1: the freezer's)
  std::string freezer_;               // v2: cgroup.freeze; v1: freezer.state; "" where none
  std::string kill_file_;             // v2 cgroup.kill where the kernel has it
  std::vector<int> enter_fds_;        // cgroup.procs per hierarchy, open for the child's write
  int64_t memory_bytes_ = 0, pids_max_ = 0;
  std::vector<pid_t> seen_;  // pids found inside while frozen: reaped by kill_all where they were ours
  bool memory_asked_ = false;
  bool frozen_ = false;
};

}  // namespace kevolve::process
