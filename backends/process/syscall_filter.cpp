#include "backends/process/syscall_filter.hpp"

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#include "backends/process/syscall_lists.hpp"

namespace kevolve::process {

#if defined(__x86_64__)
namespace {

constexpr uint32_t kNr = offsetof(seccomp_data, nr);
constexpr uint32_t kArch = offsetof(seccomp_data, arch);
constexpr uint32_t arg_low(int i) { return offsetof(seccomp_data, args) + 8 * i; }  // little-endian: low word

// A BPF program built forwards; jumps are relative, so each rule is one self-contained block that either
// returns or falls through to the next rule.
struct Program {
  std::vector<sock_filter> code;
  void ret(uint32_t action) { code.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  void load(uint32_t offset) { code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  // if (nr == sys) return action;
  void on(int sys, uint32_t action) {
    load(kNr);
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(sys), 0, 1));
    ret(action);
  }
  // if (nr == sys && (arg_i & mask) == value) return action;
  void on_masked(int sys, int arg, uint32_t mask, uint32_t value, uint32_t action) {
    load(kNr);
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(sys), 0, 4));
    load(arg_low(arg));
    code.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask));
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1));
    ret(action);
  }
  // if (nr == sys && arg_i == value) return action; (all 64 bits)
  void on_equal(int sys, int arg, uint64_t value, uint32_t action) {
    load(kNr);
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(sys), 0, 5));
    load(arg_low(arg));
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(value), 0, 3));
    load(arg_low(arg) + 4);
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(value >> 32), 0, 1));
    ret(action);
  }
  // On every thread of the process (TSYNC). "" or what failed.
  std::string install() {
    if (code.size() > BPF_MAXINSNS) return "seccomp: the filter has too many instructions";
    sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
      return std::string("seccomp: ") + std::strerror(errno);
    return {};
  }
};

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kTrap = SECCOMP_RET_TRAP;  // refused with EPERM by on_sigsys, and said on stderr
constexpr uint32_t errno_of(int e) { return SECCOMP_RET_ERRNO | static_cast<uint32_t>(e); }

// SIGSYS from a trapped call: it did not run; it returns -EPERM, and one line names it.
void on_sigsys(int, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
  char line[80] = "kevolve-runner: system call ";
  size_t n = std::strlen(line);
  char digits[12];
  int d = 0;
  for (unsigned v = static_cast<unsigned>(info->si_syscall); d == 0 || v != 0; v /= 10) digits[d++] = '0' + v % 10;
  while (d > 0) line[n++] = digits[--d];
  const char tail[] = " refused by the sandbox\n";
  std::memcpy(line + n, tail, sizeof tail - 1);
  n += sizeof tail - 1;
  const ssize_t ignored = write(STDERR_FILENO, line, n);
  (void)ignored;
}

}  // namespace

std::string install_gpu_runner_filter(const GpuFilterOptions& o) {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, nullptr) != 0) return std::string("sigaction(SIGSYS): ") + std::strerror(errno);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);

  Program p;
  p.load(kArch);  // another ABI (i386 int 0x80 numbers) would mean other system calls: killed
  p.code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  p.ret(kKill);
  p.load(kNr);  // the x32 ABI shares the architecture word: its numbers carry bit 30
  p.code.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.ret(kKill);
  // What the GPU driver does once it is up: device controls, event descriptors and their polling, and
  // the priority queries of its threads.
  for (int s :
       {SYS_ioctl, SYS_poll, SYS_ppoll, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_wait, SYS_epoll_pwait, SYS_eventfd2,
        SYS_pipe2, SYS_dup, SYS_dup3, SYS_getpriority, SYS_sched_get_priority_max, SYS_sched_get_priority_min,
        SYS_mlock, SYS_munlock, SYS_msync, SYS_rt_sigtimedwait, SYS_restart_syscall, SYS_getcpu,
        // NUMA placement of the caller's own memory (ROCm's thunk binds its host buffers to a node).
        SYS_mbind, SYS_get_mempolicy, SYS_set_mempolicy})
    p.on(s, kAllow);
  for (int s : kAllowedSyscalls) p.on(s, kAllow);
  for (int s : kForbiddenSyscalls) p.on(s, kKill);
  // New processes die; threads (the driver's, OpenMP's) are fine. clone3's flags live in memory the
  // filter cannot read: ENOSYS, and glibc falls back to clone.
  p.on_masked(SYS_clone, 0, CLONE_THREAD, CLONE_THREAD, kAllow);
  p.on(SYS_clone, kKill);
#ifdef SYS_clone3
  p.on(SYS_clone3, errno_of(ENOSYS));
#endif
#ifdef SYS_openat2
  p.on(SYS_openat2, errno_of(ENOSYS));
#endif
  // Memory: anonymous executable memory kills; executable file mappings and executable protection after the
  // fact are refused.
  p.on_masked(SYS_mmap, 2, PROT_EXEC, 0, kAllow);
  p.on_masked(SYS_mmap, 3, MAP_ANONYMOUS, MAP_ANONYMOUS, kKill);
  p.on(SYS_mmap, o.loading ? kAllow : kTrap);  // an executable file mapping: a library being loaded
  p.on_masked(SYS_mprotect, 2, PROT_EXEC, 0, kAllow);
  p.on(SYS_mprotect, kTrap);  // refused and said (were the driver ever to need it, the log names the call)
  // Files: reading anywhere; writing only inside a private filesystem; never creating or truncating.
  const uint32_t create = O_CREAT | O_TRUNC | O_APPEND;
  const uint32_t write_flags = O_WRONLY | O_RDWR;
  const uint32_t refused = o.private_filesystem ? create : create | write_flags;
  for (int s : {SYS_open, SYS_openat}) {
    p.on_masked(s, s == SYS_open ? 1 : 2, refused, 0, kAllow);
    p.on(s, kTrap);
  }
  // Its own threads and limits only.
  p.on_equal(SYS_sched_setaffinity, 0, 0, kAllow);
  p.on_equal(SYS_tgkill, 0, static_cast<uint64_t>(getpid()), kAllow);
  p.on_equal(SYS_prlimit64, 0, 0, kAllow);  // its own limits (raising needs a capability it lacks)
  p.on_equal(SYS_prlimit64, 2, 0, kAllow);  // reading anyone's
  p.ret(kTrap);

  return p.install();
}

std::string close_loading() {
  Program p;
  p.on_masked(SYS_mmap, 2, PROT_EXEC, PROT_EXEC, kTrap);
  p.on_masked(SYS_mprotect, 2, PROT_EXEC, PROT_EXEC, kTrap);
  p.ret(kAllow);  // stacked: everything else is decided by the first filter
  return p.install();
}
#else
std::string install_gpu_runner_filter(const GpuFilterOptions&) {
  return "no seccomp filter for this architecture (written for x86-64 only)";
}
std::string close_loading() { return {}; }
#endif

}  // namespace kevolve::process
