#include "backends/process/identity.hpp"

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace kevolve::process {

bool enter_private_namespaces() { return unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) == 0; }

std::string become_nobody() {
  if (setgroups(0, nullptr) != 0) return std::string("setgroups: ") + std::strerror(errno);
  if (setresgid(kNobody, kNobody, kNobody) != 0) return std::string("setresgid: ") + std::strerror(errno);
  if (setresuid(kNobody, kNobody, kNobody) != 0) return std::string("setresuid: ") + std::strerror(errno);
  if (getuid() != kNobody || geteuid() != kNobody) return "the uid did not change";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  return {};
}

}  // namespace kevolve::process
