#include "backends/cpu/runner/sandbox.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <seccomp.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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

std::string limit_data(int64_t extra_mb) {
  std::ifstream status("/proc/self/status");
  std::string line;
  int64_t data_kb = 0;
  while (std::getline(status, line))
    if (line.rfind("VmData:", 0) == 0) data_kb = std::stoll(line.substr(7));
  const rlim_t limit = static_cast<rlim_t>(data_kb * 1024 + extra_mb * 1024 * 1024);
  rlimit r{limit, limit};
  if (setrlimit(RLIMIT_DATA, &r) != 0) return std::string("RLIMIT_DATA: ") + std::strerror(errno);
  return {};
}

namespace {

struct Filter {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  ~Filter() { if (ctx) seccomp_release(ctx); }
  int rc = 0;
  void kill(int sys) { if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sys, 0); }
  template <class... A>
  void kill_if(int sys, A... a) { if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sys, sizeof...(A), a...); }
  void enosys(int sys) { if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), sys, 0); }
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
  Filter f;
  for (int s : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(socket),
                SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept),
                SCMP_SYS(accept4), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                SCMP_SYS(kill), SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename),
                SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir),
                SCMP_SYS(truncate), SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat),
                SCMP_SYS(chmod), SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchownat), SCMP_SYS(memfd_create),
                SCMP_SYS(mount), SCMP_SYS(chroot), SCMP_SYS(setns), SCMP_SYS(unshare), SCMP_SYS(keyctl),
                SCMP_SYS(bpf), SCMP_SYS(userfaultfd), SCMP_SYS(perf_event_open)})
    f.kill(s);
  // Threads are fine (OpenMP, std::thread); new processes are not: clone without CLONE_THREAD dies.
  f.kill_if(SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  f.enosys(SCMP_SYS(clone3));  // its flags live in memory seccomp cannot read; glibc falls back to clone
  f.enosys(SCMP_SYS(openat2));
  for (int flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND}) {
    f.kill_if(SCMP_SYS(open), SCMP_A1(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
    f.kill_if(SCMP_SYS(openat), SCMP_A2(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
  }
  f.kill_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
            SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS));
  f.kill_if(SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  f.kill_if(SCMP_SYS(pkey_mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  return f.load("seccomp stage 1");
}

std::string seccomp_stage2() {
  Filter f;
  f.kill_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  return f.load("seccomp stage 2");
}

std::string check_executable_mappings(const std::string& candidate_path) {
  std::ifstream maps("/proc/self/maps");
  char self[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  static const char* const allowed[] = {"/libc.so", "/libc-", "/libm.so", "/libstdc++.so", "/libgcc_s.so",
                                        "/libgomp.so", "/ld-linux", "/libseccomp.so", "/libpthread", "/libdl"};
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream is(line);
    std::string range, perms, off, dev, inode, path;
    is >> range >> perms >> off >> dev >> inode;
    std::getline(is >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] == '[') continue;
    if (path == exe || path == candidate_path) continue;
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
