#include "backends/cpu/runner/sandbox.hpp"

#include "backends/process/syscall_lists.hpp"

#include "backends/process/identity.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <seccomp.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace kevolve::cpu {

std::string apply_process_limits(int64_t cpu_seconds) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return std::string("prctl(PDEATHSIG): ") + std::strerror(errno);
  rlimit core{0, 0};
  if (setrlimit(RLIMIT_CORE, &core) != 0) return std::string("RLIMIT_CORE: ") + std::strerror(errno);
  rlimit cpu{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds + 5)};
  if (setrlimit(RLIMIT_CPU, &cpu) != 0) return std::string("RLIMIT_CPU: ") + std::strerror(errno);
  rlimit fsize{0, 0};
  if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) return std::string("RLIMIT_FSIZE: ") + std::strerror(errno);
  return {};
}

namespace {

int64_t status_kb(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(status, line))
    if (line.compare(0, n, key) == 0) return std::stoll(line.substr(n));
  return 0;
}

bool write_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

}  // namespace

std::string drop_identity(std::string& level) {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (geteuid() == 0) {
    // Root: empty network, IPC and host-name namespaces, then an unprivileged uid of its own (no
    // capabilities left): another uid's processes (the evaluator, other runners) cannot be read, traced,
    // signalled, reniced or re-pinned, and root's files cannot be written.
    const bool ns = process::enter_private_namespaces();
    const std::string ns_error = ns ? "" : std::strerror(errno);
    std::string no_files;
    const std::string files = process::private_filesystem(no_files);
    if (auto e = process::become_runner_user(); !e.empty()) return e;
    level = "uid " + std::to_string(getuid()) + " (its own) without capabilities" +
            (ns ? ", own network + IPC + UTS namespaces (no network)"
                : ", shared network (unshare refused: " + ns_error + ")") +
            (files.empty() ? ", shared filesystem (no mount namespace: " + no_files + ")" : ", " + files);
  } else if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) == 0) {
    // Not root: a user namespace of its own in which it is "nobody" (mapped onto the evaluator's uid
    // outside) with no capabilities, and an empty network.
    if (!write_file("/proc/self/setgroups", "deny") ||
        !write_file("/proc/self/uid_map", std::to_string(kNobody) + " " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", std::to_string(kNobody) + " " + std::to_string(gid) + " 1"))
      return std::string("user namespace id maps: ") + std::strerror(errno);
    if (setresgid(kNobody, kNobody, kNobody) != 0 || setresuid(kNobody, kNobody, kNobody) != 0)
      return std::string("setresuid in the user namespace: ") + std::strerror(errno);
    level = "user namespace (nobody, no capabilities; same uid " + std::to_string(uid) +
            " as the evaluator outside), own network + IPC + UTS namespaces (no network)";
  } else {
    level = "same uid " + std::to_string(uid) +
            " as the evaluator (not root, user namespaces refused: " + std::strerror(errno) + ")";
  }
  // A change of uid makes the process non-dumpable, which would hand /proc/self to root; this process
  // reads its own /proc/self (maps, task, status). ptrace and process_vm_* stay forbidden by seccomp.
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  return {};
}

std::string limit_memory(int64_t extra_mb) {
  const rlim_t extra = static_cast<rlim_t>(extra_mb) * 1024 * 1024;
  const rlim_t data = static_cast<rlim_t>(status_kb("VmData:")) * 1024 + extra;
  rlimit r{data, data};
  if (setrlimit(RLIMIT_DATA, &r) != 0) return std::string("RLIMIT_DATA: ") + std::strerror(errno);
  // RLIMIT_AS also counts shared anonymous mappings (RLIMIT_DATA does not). Room above the data limit for
  // thread stacks (8 MiB each) and malloc's per-thread arenas (64 MiB of address space each).
  const rlim_t as = static_cast<rlim_t>(status_kb("VmSize:")) * 1024 + extra + (rlim_t{1} << 30);
  rlimit a{as, as};
  if (setrlimit(RLIMIT_AS, &a) != 0) return std::string("RLIMIT_AS: ") + std::strerror(errno);
  return {};
}

std::string limit_threads(int64_t max_tasks) {
  // Counted per uid: with the runner under a uid of its own, a thread bomb fails to create threads instead of
  // exhausting the machine. (As root, RLIMIT_NPROC does not apply.)
  rlimit r{static_cast<rlim_t>(max_tasks), static_cast<rlim_t>(max_tasks)};
  if (setrlimit(RLIMIT_NPROC, &r) != 0) return std::string("RLIMIT_NPROC: ") + std::strerror(errno);
  return {};
}

namespace {

struct Filter {
  explicit Filter(uint32_t default_action) : ctx(seccomp_init(default_action)) {}
  scmp_filter_ctx ctx;
  ~Filter() {
    if (ctx) seccomp_release(ctx);
  }
  int rc = 0;
  void kill(int sys) {
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sys, 0);
  }
  template <class... A>
  void kill_if(int sys, A... a) {
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sys, sizeof...(A), a...);
  }
  void enosys(int sys) {
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), sys, 0);
  }
  void allow(int sys) {
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sys, 0);
  }
  template <class... A>
  void allow_if(int sys, A... a) {
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sys, sizeof...(A), a...);
  }
  std::string load(const char* what) {
    if (!ctx) return std::string(what) + ": seccomp_init failed";
    if (rc) return std::string(what) + ": seccomp_rule_add: " + std::strerror(-rc);
    if (int r = seccomp_load(ctx); r != 0) return std::string(what) + ": seccomp_load: " + std::strerror(-r);
    return {};
  }
};

}  // namespace

std::string seccomp_stage1() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  // An allow-list: a system call not named here fails with EPERM; the ones below that no kernel needs and
  // escapes do are named so that they kill the process (SIGSYS), and the verdict says why.
  Filter f(SCMP_ACT_ERRNO(EPERM));
  for (int s : process::kAllowedSyscalls) f.allow(s);
  // Own threads only: OpenMP pins its workers by thread id; another process has another uid.
  f.allow_if(SCMP_SYS(sched_setaffinity), SCMP_A0(SCMP_CMP_EQ, 0));
  f.allow_if(SCMP_SYS(tgkill), SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid())));  // abort(), thread signals
  f.allow_if(SCMP_SYS(prlimit64),
             SCMP_A0(SCMP_CMP_EQ, 0));  // its own limits (lowering; raising needs a capability it lacks)
  f.allow_if(SCMP_SYS(prlimit64), SCMP_A2(SCMP_CMP_EQ, 0));  // reading any
  // Reading files (the candidate's libraries, /proc/self); any write flag kills.
  constexpr scmp_datum_t kWrite = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  f.allow_if(SCMP_SYS(open), SCMP_A1(SCMP_CMP_MASKED_EQ, kWrite, 0));
  f.allow_if(SCMP_SYS(openat), SCMP_A2(SCMP_CMP_MASKED_EQ, kWrite, 0));
  for (int flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND}) {
    f.kill_if(SCMP_SYS(open),
              SCMP_A1(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
    f.kill_if(SCMP_SYS(openat),
              SCMP_A2(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
  }
  // Memory: never anonymous executable memory, never executable protection after the fact; files may be
  // mapped executable only while the candidate is loaded (stage 2 ends that).
  f.allow_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  f.allow_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
             SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0));
  f.kill_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
            SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS));
  f.allow_if(SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  f.kill_if(SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  // Threads are fine (OpenMP, std::thread); new processes are not: clone without CLONE_THREAD dies.
  f.allow_if(SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  f.kill_if(SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  f.enosys(SCMP_SYS(clone3));  // its flags live in memory seccomp cannot read; glibc falls back to clone
  f.enosys(SCMP_SYS(openat2));
  // Named so that a violation is reported as one (backends/process/syscall_lists.hpp).
  for (int s : process::kForbiddenSyscalls) f.kill(s);
  return f.load("seccomp stage 1");
}

std::string seccomp_stage2() {
  Filter f(SCMP_ACT_ALLOW);  // stacked on stage 1: only narrows it
  f.kill_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  return f.load("seccomp stage 2");
}

std::string check_executable_mappings(const std::string& candidate_path, int candidate_fd) {
  // The candidate's own mapping is recognised by its file (device and inode), not only by its path: after the
  // runner enters a mount namespace of its own, a file opened before shows a path from outside a chroot.
  struct stat cand {};
  const bool have_cand = fstat(candidate_fd, &cand) == 0;
  char cand_dev[32];
  std::snprintf(cand_dev, sizeof cand_dev, "%02x:%02x", major(cand.st_dev), minor(cand.st_dev));
  std::ifstream maps("/proc/self/maps");
  char self[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  static const char* const allowed[] = {"/libc.so",    "/libc-",    "/libm.so",       "/libstdc++.so", "/libgcc_s.so",
                                        "/libgomp.so", "/ld-linux", "/libseccomp.so", "/libpthread",   "/libdl"};
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream is(line);
    std::string range, perms, off, dev, inode, path;
    is >> range >> perms >> off >> dev >> inode;
    std::getline(is >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] == '[') continue;
    if (path == exe || path == candidate_path) continue;
    if (have_cand && dev == cand_dev && inode == std::to_string(cand.st_ino)) continue;
    bool ok = false;
    for (auto a : allowed) ok |= path.find(a) != std::string::npos;
    if (!ok) return "the candidate loaded a library that is not allowed: " + path;
  }
  return {};
}

int count_threads() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

}  // namespace kevolve::cpu
