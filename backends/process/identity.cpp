#include "backends/process/identity.hpp"

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace kevolve::process {

bool enter_private_namespaces() { return unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) == 0; }

std::string private_filesystem(std::string& why_not) {
  if (unshare(CLONE_NEWNS) != 0) {
    why_not = std::string("unshare: ") + std::strerror(errno);
    return "";
  }
  // Nothing mounted here may propagate back to the evaluator's namespace: where the mounts cannot be made
  // private (a chroot whose root is no mount point, for one), nothing is mounted at all.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    why_not = std::string("its mounts could not be made private: ") + std::strerror(errno);
    return "";
  }
  std::string level = "private mounts", failed;
  auto note = [&](bool ok, const char* what) {
    std::string& to = ok ? level : failed;
    to += (to.empty() ? "" : ", ") + std::string(what);
  };
  note(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") == 0, "private /tmp (64 MiB)");
  note(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64m,mode=1777") == 0,
       "private /dev/shm");
  // A /proc of its own that hides every process of another user (hidepid=2): once nobody, the evaluator,
  // the node and everything else run by root are invisible (their command lines and files included).
  note(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") == 0,
       "own /proc showing no other user's process");
  note(mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) == 0, "read-only root");
  return level + (failed.empty() ? "" : " (not in force: " + failed + ")");
}

uid_t runner_uid() { return kRunnerIdBase + static_cast<uid_t>(getpid()); }

std::string become_runner_user() {
  const uid_t id = runner_uid();
  if (setgroups(0, nullptr) != 0) return std::string("setgroups: ") + std::strerror(errno);
  if (setresgid(id, id, id) != 0) return std::string("setresgid: ") + std::strerror(errno);
  if (setresuid(id, id, id) != 0) return std::string("setresuid: ") + std::strerror(errno);
  if (getuid() != id || geteuid() != id) return "the uid did not change";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  return {};
}

}  // namespace kevolve::process
