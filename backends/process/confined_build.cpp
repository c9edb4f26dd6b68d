// The confined run of a compiler on candidate text (see confined_build.hpp). Three processes:
//   caller ── fork ──> A (outside: drops nothing, takes the new namespaces, waits) ── fork ──> B
// B is the first process of a new PID namespace (when the kernel allows one), so every process the
// compiler starts dies with it; it builds the confined root, gives up root and executes the compiler.
// Everything A and B use is prepared before the first fork (the caller may have threads): between fork
// and exec they only make system calls on data laid out in advance.
#include "backends/process/confined_build.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <glob.h>
#include <grp.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/process/eval_cgroup.hpp"
#include "backends/process/identity.hpp"

namespace kevolve::process {
namespace {

namespace fs = std::filesystem;

// One step of building the confined root, executed by B in order.
enum class Op { mkdir, symlink, touch, bind_ro, bind_rw, tmpfs, proc, read_only };
struct Step {
  Op op;
  std::string a, b;   // bind: source, target; symlink: link text, path; others: path in a
  unsigned long remount_flags = 0;  // bind: flags of the read-only/nosuid remount
  bool optional = false;            // a failure is noted, not fatal to the private filesystem
};

// The toolchain as the confined root shows it: read-only, never the evaluator's data.
const char* const kToolchain[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                  "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"};
// Variables a compiler may need, passed on when set (their folders are shown read-only too).
const char* const kToolchainVars[] = {"CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH", "HIP_PLATFORM",
                                      "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH", "KEVOLVE_NVRTC"};
const char* const kToolchainPathVars[] = {"CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH", "HIP_CLANG_PATH",
                                          "HIP_DEVICE_LIB_PATH", "KEVOLVE_NVRTC"};

// The flags a read-only bind of `src` is remounted with: its own locked ones (nodev, noexec, atime: a user
// namespace may not clear them) plus read-only and nosuid, and nodev except for device nodes.
unsigned long remount_flags(const std::string& src, bool device) {
  unsigned long f = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | (device ? 0 : MS_NODEV);
  struct statvfs v {};
  if (statvfs(src.c_str(), &v) == 0) {
    if (v.f_flag & ST_NODEV) f |= MS_NODEV;
    if (v.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
    if (v.f_flag & ST_NOATIME) f |= MS_NOATIME;
    if (v.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (v.f_flag & ST_RELATIME) f |= MS_RELATIME;
  }
  return f;
}

// The steps that make `path`'s parents exist below `root` (no links followed: the root is fresh).
void make_parents(const std::string& root, const fs::path& path, std::vector<Step>& steps) {
  fs::path at = root;
  for (auto it = path.begin(); it != path.end(); ++it) {
    if (std::next(it) == path.end()) break;
    if (*it == "/") continue;
    at /= *it;
    steps.push_back({Op::mkdir, at.string(), ""});
  }
}

// Shows `src` (a file, folder or link) at the same path below `root`, read-only.
void show(const std::string& root, const std::string& src, std::vector<Step>& steps, bool optional) {
  struct stat st {};
  if (lstat(src.c_str(), &st) != 0) return;
  const std::string at = root + src;
  make_parents(root, src, steps);
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const auto target = fs::read_symlink(src, ec);
    if (!ec) steps.push_back({Op::symlink, target.string(), at});
    // a link elsewhere is shown as what it points to, below the same name
    if (!ec && target.is_absolute()) show(root, fs::weakly_canonical(src, ec).string(), steps, optional);
    return;
  }
  const bool dir = S_ISDIR(st.st_mode), device = S_ISCHR(st.st_mode);
  steps.push_back({dir ? Op::mkdir : Op::touch, at, ""});
  steps.push_back({Op::bind_ro, src, at, remount_flags(src, device), optional});
}

std::string errno_text(int e) { return std::strerror(e); }

// --- between fork and exec: system calls only ---

// Writes "<tag> <errno>\n" to the status pipe (async-signal-safe).
void note(int fd, const char* tag, int err) {
  char num[16];
  int n = 0;
  unsigned v = static_cast<unsigned>(err);
  char rev[16];
  do rev[n++] = static_cast<char>('0' + v % 10), v /= 10;
  while (v && n < 15);
  for (int i = 0; i < n; ++i) num[i] = rev[n - 1 - i];
  num[n++] = '\n';
  (void)!write(fd, tag, std::strlen(tag));
  (void)!write(fd, " ", 1);
  (void)!write(fd, num, static_cast<size_t>(n));
}

int write_file(const char* path, const char* text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = write(fd, text, std::strlen(text));
  close(fd);
  return n == static_cast<ssize_t>(std::strlen(text)) ? 0 : -1;
}

// Runs the steps; on failure notes which ("fs <errno>" preceded by the step's index) and returns false.
bool run_steps(const std::vector<Step>& steps, int status) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const char* a = s.a.c_str();
    int rc = 0;
    switch (s.op) {
      case Op::mkdir:
        rc = (mkdir(a, 0755) == 0 || errno == EEXIST) ? 0 : -1;
        break;
      case Op::symlink:
        rc = (symlink(a, s.b.c_str()) == 0 || errno == EEXIST) ? 0 : -1;
        break;
      case Op::touch: {
        struct stat st {};
        if (lstat(a, &st) == 0) break;  // already there (below a folder shown read-only, say)
        const int fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        rc = fd >= 0 ? close(fd) : -1;
        break;
      }
      case Op::bind_ro:
        rc = mount(a, s.b.c_str(), nullptr, MS_BIND | MS_REC, nullptr);
        if (rc == 0) rc = mount(nullptr, s.b.c_str(), nullptr, s.remount_flags, nullptr);
        break;
      case Op::bind_rw:
        rc = mount(a, s.b.c_str(), nullptr, MS_BIND, nullptr);
        if (rc == 0) rc = mount(nullptr, s.b.c_str(), nullptr, s.remount_flags, nullptr);
        break;
      case Op::tmpfs:
        rc = mount("tmpfs", a, "tmpfs", MS_NOSUID | MS_NODEV, s.b.c_str());
        break;
      case Op::proc:
        rc = mount("proc", a, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
        break;
      case Op::read_only:
        rc = mount(nullptr, a, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr);
        break;
    }
    if (rc != 0) {
      const int e = errno;
      char tag[32] = "step ";
      size_t n = 5, v = i;
      char rev[16];
      int k = 0;
      do rev[k++] = static_cast<char>('0' + v % 10), v /= 10;
      while (v && k < 15);
      while (k) tag[n++] = rev[--k];
      tag[n] = '\0';
      note(status, tag, e);
      if (!s.optional) return false;
    }
  }
  return true;
}

struct Plan {
  std::vector<char*> argv, envp;
  std::vector<Step> steps;
  std::string root, dir;
  bool as_root = false;
  gid_t gid = 0;
  uid_t uid = 0;
  std::string uid_map, gid_map;  // the user namespace's (non-root): this uid to itself
  BuildLimits limits;
  double timeout_s = 0;
  int out = -1, status = -1, devnull = -1;
  const EvalCgroup* cgroup = nullptr;  // every process of the build inside it, where one could be made
};

void set_limit(int res, rlim_t v, int status, const char* tag) {
  const rlimit l{v, v};
  if (setrlimit(res, &l) != 0) note(status, tag, errno);
}

// B: the confined root, the limits, the uid; then the compiler.
[[noreturn]] void confined_child(const Plan& p, bool namespaces) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (namespaces) {
    bool ok = mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    if (!ok) note(p.status, "private", errno);
    if (ok) ok = run_steps(p.steps, p.status);
    if (ok) {
      // The fresh root replaces the old one, which is detached: nothing outside it can be reached.
      if (chdir(p.root.c_str()) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
        note(p.status, "pivot", errno);
      } else {
        if (umount2(".", MNT_DETACH) != 0) {
          note(p.status, "fatal-umount", errno);
          _exit(126);
        }
        note(p.status, "fs", 0);
      }
    }
  }
  if (chdir(p.dir.c_str()) != 0) {
    note(p.status, "fatal-chdir", errno);
    _exit(126);
  }
  dup2(p.devnull, 0);
  dup2(p.out, 1);
  dup2(p.out, 2);
  // Only stdin, stdout, stderr and the status pipe (fd 3, closed by exec) reach the compiler.
  const int status = 3;
  if (p.status != status) dup2(p.status, status);
  fcntl(status, F_SETFD, FD_CLOEXEC);
  if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
    for (int fd = 4; fd < 4096; ++fd) close(fd);
  const rlim_t mem = static_cast<rlim_t>(p.limits.memory_bytes);
  set_limit(RLIMIT_AS, mem, status, "rlimit-as");
  set_limit(RLIMIT_DATA, mem, status, "rlimit-data");
  set_limit(RLIMIT_FSIZE, static_cast<rlim_t>(p.limits.file_bytes), status, "rlimit-fsize");
  set_limit(RLIMIT_CPU, static_cast<rlim_t>(p.timeout_s) + 1, status, "rlimit-cpu");
  set_limit(RLIMIT_CORE, 0, status, "rlimit-core");
  set_limit(RLIMIT_NOFILE, 1024, status, "rlimit-nofile");
  if (p.as_root) {
    // A uid of its own: RLIMIT_NPROC counts this build alone.
    set_limit(RLIMIT_NPROC, static_cast<rlim_t>(p.limits.processes), status, "rlimit-nproc");
    if (setgroups(0, nullptr) != 0 || setresgid(p.gid, p.gid, p.gid) != 0 || setresuid(p.uid, p.uid, p.uid) != 0 ||
        getuid() != p.uid || geteuid() != p.uid) {
      note(status, "fatal-uid", errno);
      _exit(126);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    note(status, "fatal-nnp", errno);
    _exit(126);
  }
  execvpe(p.argv[0], p.argv.data(), p.envp.data());
  note(status, "exec", errno);
  _exit(127);
}

// A: namespaces, then B, whose exit it passes on.
[[noreturn]] void outer_child(Plan& p, pid_t caller) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) _exit(126);
  if (p.cgroup)
    if (const int e = p.cgroup->enter_from_child(); e != 0) {
      note(p.status, "fatal-cgroup", e);
      _exit(126);
    }
  if (p.as_root) {
    p.uid = kRunnerIdBase + static_cast<uid_t>(getpid());
    p.gid = p.uid;
    if (lchown(p.dir.c_str(), p.uid, p.gid) != 0) {
      note(p.status, "fatal-chown", errno);
      _exit(126);
    }
  }
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
  if (!p.as_root) flags |= CLONE_NEWUSER;
  bool namespaces = unshare(flags) == 0;
  if (!namespaces) note(p.status, "ns", errno);
  if (namespaces && !p.as_root) {
    // This uid (and gid) stays itself inside: no root there once the compiler runs.
    if (write_file("/proc/self/setgroups", "deny") != 0 || write_file("/proc/self/uid_map", p.uid_map.c_str()) != 0 ||
        write_file("/proc/self/gid_map", p.gid_map.c_str()) != 0) {
      note(p.status, "userns-map", errno);
      namespaces = false;
    }
  }
  const pid_t b = fork();
  if (b < 0) {
    note(p.status, "fatal-fork", errno);
    _exit(126);
  }
  if (b == 0) confined_child(p, namespaces);
  close(p.out);
  close(p.status);
  int st = 0;
  while (waitpid(b, &st, 0) < 0 && errno == EINTR) {
  }
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0));
}

// The caller's ownership back on everything the build left (links are not followed).
void reclaim(const std::string& dir) {
  const uid_t u = geteuid();
  const gid_t g = getegid();
  if (u != 0) return;
  lchown(dir.c_str(), u, g);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    lchown(it->path().c_str(), u, g);
}

std::string mib(int64_t b) { return std::to_string(b >> 20) + " MiB"; }

// The confined root's steps: a small tmpfs, the toolchain read-only (with the places named by the toolchain's
// variables and b.read_only), /dev null and urandom, /tmp, /proc, the build folder `dir` writable.
void plan_root(Plan& p, const ConfinedBuild& b, const fs::path& dir) {
  std::error_code ec;
  std::vector<std::string> shown;
  p.steps.push_back({Op::tmpfs, p.root, "size=1m,mode=0755"});
  for (const char* t : kToolchain) shown.push_back(t);
  auto show_glob = [&](const std::string& pattern) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) shown.push_back(g.gl_pathv[i]);
    globfree(&g);
  };
  show_glob("/opt/rocm*");
  // Named places are shown by their real path (no link in their parents), never the whole filesystem.
  std::vector<std::string> named;
  for (const char* v : kToolchainPathVars)
    if (const char* h = std::getenv(v); h && *h == '/') named.push_back(h);
  // A libnvrtc named alone ($KEVOLVE_NVRTC) loads its builtins library from beside it.
  if (const char* h = std::getenv("KEVOLVE_NVRTC"); h && *h == '/' && fs::is_regular_file(h, ec))
    show_glob(fs::path(h).parent_path().string() + "/libnvrtc-builtins*");
  named.insert(named.end(), b.read_only.begin(), b.read_only.end());
  for (const auto& n : named) {
    const auto c = fs::weakly_canonical(n, ec);
    if (!ec && c.is_absolute() && c != "/") shown.push_back(c.string());
  }
  for (const auto& s : shown) show(p.root, s, p.steps, false);
  p.steps.push_back({Op::mkdir, p.root + "/tmp", ""});
  p.steps.push_back({Op::tmpfs, p.root + "/tmp", "size=64m,mode=1777"});
  p.steps.push_back({Op::mkdir, p.root + "/dev", ""});
  for (const char* d : {"/dev/null", "/dev/urandom"}) {
    p.steps.push_back({Op::touch, p.root + d, ""});
    p.steps.push_back({Op::bind_ro, d, p.root + d, remount_flags(d, true)});
  }
  p.steps.push_back({Op::mkdir, p.root + "/proc", ""});
  p.steps.push_back({Op::proc, p.root + "/proc", "", 0, true});  // own PID namespace: its processes only
  make_parents(p.root, dir, p.steps);
  p.steps.push_back({Op::mkdir, p.root + p.dir, ""});
  p.steps.push_back({Op::bind_rw, p.dir, p.root + p.dir, (remount_flags(p.dir, false) & ~MS_RDONLY)});
  p.steps.push_back({Op::read_only, p.root, ""});
}

// The build's environment: what a compiler needs (PATH, the toolchain's variables, b.env), nothing of kevolve's;
// its TMPDIR and HOME are the build folder `dir`.
std::vector<std::string> build_env(const ConfinedBuild& b, const std::string& dir) {
  std::vector<std::string> env;
  const char* path = std::getenv("PATH");
  env.push_back(std::string("PATH=") + (path && *path ? path : "/usr/local/bin:/usr/bin:/bin"));
  for (const char* kv : {"LANG=C", "LC_ALL=C"}) env.push_back(kv);
  env.push_back("TMPDIR=" + dir);
  env.push_back("HOME=" + dir);
  for (const char* v : kToolchainVars)
    if (const char* h = std::getenv(v)) env.push_back(std::string(v) + "=" + h);
  for (const auto& [k, v] : b.env) env.push_back(k + "=" + v);
  return env;
}

// What the build wrote: its diagnostics (at most diagnostics_bytes) and B's status records.
struct Collected {
  std::string output, status;
  bool cut = false;        // diagnostics beyond the bound were dropped
  bool timed_out = false;  // the deadline passed before both pipes closed
};

// Reads both pipes until they close or timeout_s passes; closes them.
Collected collect(int out_fd, int status_fd, double timeout_s, size_t diagnostics_bytes) {
  Collected c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd pf[2] = {{out_fd, POLLIN, 0}, {status_fd, POLLIN, 0}};
  char buf[4096];
  while (pf[0].fd >= 0 || pf[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      c.timed_out = true;
      break;
    }
    if (poll(pf, 2, static_cast<int>(std::min<long long>(left, INT_MAX))) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(pf[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(pf[i].fd);
        pf[i].fd = -1;
        continue;
      }
      std::string& to = i == 0 ? c.output : c.status;
      const size_t cap = i == 0 ? diagnostics_bytes : 4096;
      const size_t take = std::min(static_cast<size_t>(n), cap - std::min(cap, to.size()));
      to.append(buf, take);
      if (i == 0 && take < static_cast<size_t>(n)) c.cut = true;
    }
  }
  for (auto& f : pf)
    if (f.fd >= 0) close(f.fd);
  return c;
}

// What was in force, from B's status records ("fs", "ns", "fatal ...", "exec", "step N" with an errno).
struct InForce {
  bool filesystem = false, namespaces = true, fatal = false, exec_failed = false;
  std::string failures;  // what failed, in words: "showing /usr/lib: Permission denied; ..."
};

InForce in_force(const std::string& status, const Plan& p) {
  InForce f;
  size_t pos = 0;
  while (pos < status.size()) {
    size_t end = status.find('\n', pos);
    if (end == std::string::npos) end = status.size();
    const std::string line = status.substr(pos, end - pos);
    pos = end + 1;
    const auto sp = line.rfind(' ');
    const std::string tag = line.substr(0, sp);
    const int e = sp == std::string::npos ? 0 : std::atoi(line.c_str() + sp + 1);
    if (tag == "fs") {
      f.filesystem = true;
      continue;
    }
    if (tag == "ns") f.namespaces = false;
    if (tag.rfind("fatal", 0) == 0) f.fatal = true;
    if (tag == "exec") f.exec_failed = true;
    std::string what = tag;
    if (tag.rfind("step ", 0) == 0) {
      const size_t i = std::strtoul(tag.c_str() + 5, nullptr, 10);
      if (i < p.steps.size()) what = "showing " + (p.steps[i].b.empty() ? p.steps[i].a : p.steps[i].b);
    }
    f.failures += (f.failures.empty() ? "" : "; ") + what + ": " + errno_text(e);
  }
  return f;
}

// The sandbox line of a build's result: what was in force (uid, namespaces, filesystem, limits, cgroup) and
// what was meant to be and was not.
std::string describe_sandbox(const Plan& p, const ConfinedBuild& b, const InForce& f, pid_t pid,
                             const EvalCgroup* cgroup, bool emptied, const std::string& no_cgroup) {
  std::string s = "build sandbox: ";
  s += p.as_root ? "uid " + std::to_string(kRunnerIdBase + static_cast<uid_t>(pid)) + " (its own), no capabilities"
                 : "uid " + std::to_string(getuid()) + " (the caller's)";
  s += ", no_new_privs";
  s += f.filesystem
           ? ", mount namespace with the toolchain only (read-only), /dev null and urandom only, private /tmp, "
             "the build folder its only writable place"
           : ", NO private filesystem (every file this uid may read is readable)";
  if (f.namespaces) s += ", own PID + network + IPC + UTS namespaces (no network)";
  if (!p.as_root && f.namespaces) s += " in a user namespace";
  s += ", stdin /dev/null, reduced environment, RLIMIT_AS/DATA " + mib(b.limits.memory_bytes) + ", CPU " +
       std::to_string(static_cast<long>(b.timeout_s) + 1) + " s, FSIZE " + mib(b.limits.file_bytes);
  s += p.as_root ? ", NPROC " + std::to_string(b.limits.processes) : ", processes not bounded (no uid of its own)";
  s += ", no core files, diagnostics at most " + std::to_string(b.limits.diagnostics_bytes >> 10) + " KiB";
  s += cgroup ? ", " + cgroup->describe() + (emptied ? ", emptied at the end" : ", NOT empty at the end")
              : ", no cgroup (" + no_cgroup + ")";
  if (!f.failures.empty()) s += " (not in force: " + f.failures + ")";
  return s;
}

}  // namespace

bool regular_file(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::optional<std::string> read_build_file(const std::string& path, size_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return std::nullopt;
  }
  std::string text(std::min(static_cast<size_t>(st.st_size), max_bytes), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  return text;
}

ConfinedResult run_confined(const ConfinedBuild& b) {
  ConfinedResult r;
  std::error_code ec;
  const fs::path dir = fs::canonical(b.dir, ec);
  if (ec || b.argv.empty()) {
    r.output = ec ? "the build folder " + b.dir + " does not exist" : "no program to run";
    return r;
  }
  Plan p;
  p.as_root = geteuid() == 0;
  p.dir = dir.string();
  p.limits = b.limits;
  p.timeout_s = b.timeout_s;
  p.uid_map = std::to_string(getuid()) + " " + std::to_string(getuid()) + " 1\n";
  p.gid_map = std::to_string(getgid()) + " " + std::to_string(getgid()) + " 1\n";
  p.root = p.dir + ".root";  // a mount point beside the build folder, for the fresh root
  if (mkdir(p.root.c_str(), 0700) != 0 && errno != EEXIST) {
    r.output = "cannot make " + p.root + ": " + errno_text(errno);
    return r;
  }

  plan_root(p, b, dir);

  // The environment: what a compiler needs, nothing of kevolve's.
  std::vector<std::string> env = build_env(b, p.dir);
  std::vector<std::string> args = b.argv;
  for (auto& s : args) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : env) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);

  int out[2], st[2];
  p.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (p.devnull < 0 || pipe2(out, O_CLOEXEC) != 0) {
    r.output = "cannot start the build: " + errno_text(errno);
    if (p.devnull >= 0) close(p.devnull);
    rmdir(p.root.c_str());
    return r;
  }
  if (pipe2(st, O_CLOEXEC) != 0) {
    r.output = "cannot start the build: " + errno_text(errno);
    for (int fd : {p.devnull, out[0], out[1]}) close(fd);
    rmdir(p.root.c_str());
    return r;
  }
  p.out = out[1];
  p.status = st[1];
  // A cgroup of its own bounds the memory and the processes of the whole build, and kills what is left.
  std::optional<EvalCgroup> cgroup;
  std::string no_cgroup;
  if (auto c = EvalCgroup::create("build", {b.limits.memory_bytes, b.limits.processes}))
    cgroup.emplace(std::move(*c));
  else
    no_cgroup = c.error();
  p.cgroup = cgroup ? &*cgroup : nullptr;
  const pid_t caller = getpid();
  const pid_t pid = fork();
  if (pid == 0) outer_child(p, caller);
  for (int fd : {p.devnull, out[1], st[1]}) close(fd);
  if (pid < 0) {
    close(out[0]);
    close(st[0]);
    rmdir(p.root.c_str());
    r.output = "cannot start the build: fork failed";
    return r;
  }

  // Diagnostics (bounded) and the status records, until both pipes close or the deadline passes.
  Collected got = collect(out[0], st[0], b.timeout_s, b.limits.diagnostics_bytes);
  r.output = std::move(got.output);
  r.timed_out = got.timed_out;
  if (r.timed_out) kill(-pid, SIGKILL), kill(pid, SIGKILL);  // B and everything in its namespace die with A
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  const bool emptied = !cgroup || cgroup->kill_all();
  reclaim(p.dir);
  rmdir(p.root.c_str());
  if (got.cut) r.output += "\n[diagnostics cut at " + std::to_string(b.limits.diagnostics_bytes >> 10) + " KiB]\n";

  // What was in force, from B's records.
  const InForce f = in_force(got.status, p);
  r.started = !f.fatal;  // a program not found is its exit status 127, as from a shell
  if (f.fatal) r.output = "the build sandbox could not be made (" + f.failures + ")\n" + r.output;
  if (f.exec_failed) r.output = "cannot run " + b.argv[0] + ": not found in the build's toolchain\n" + r.output;
  r.exit_code = r.timed_out || !WIFEXITED(ws) || WEXITSTATUS(ws) >= 128 ? -1 : WEXITSTATUS(ws);
  if (f.exec_failed) r.exit_code = 127;

  r.sandbox = describe_sandbox(p, b, f, pid, cgroup ? &*cgroup : nullptr, emptied, no_cgroup);
  return r;
}

}  // namespace kevolve::process
