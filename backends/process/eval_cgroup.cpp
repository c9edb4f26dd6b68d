// EvalCgroup (eval_cgroup.hpp): finding this process's cgroups, making one evaluation's, freezing,
// killing and removing it.
#include "backends/process/eval_cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace kevolve::process {
namespace {

struct Hierarchies {
  std::map<std::string, std::string> v1;  // controller (pids, freezer, memory) -> this process's folder
  std::string v2;                         // this process's folder in the cgroup2 hierarchy ("" without one)
  std::string v2_parent;                  // its parent, when still inside the mount ("" at the mount's root)
};

bool has_word(const std::string& list, const std::string& word, char sep) {
  return (sep + list + sep).find(sep + word + sep) != std::string::npos;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A cgroup file's first line (cgroup.controllers, cgroup.subtree_control: space-separated names).
std::string first_line(const std::string& path) {
  const std::string t = read_text(path);
  return t.substr(0, t.find('\n'));
}

// 0 or errno. One write(2), as the kernel's cgroup files want.
int write_text(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

Hierarchies find_hierarchies() {
  std::map<std::string, std::string> v1_mount;  // controller -> mount point
  std::string v2_mount;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
    std::string id, parent, devno, root, mount_point, fstype, source, super;
    pre >> id >> parent >> devno >> root >> mount_point;
    post >> fstype >> source >> super;
    if (fstype == "cgroup")
      for (const char* c : {"pids", "freezer", "memory"})
        if (has_word(super, c, ',') && !v1_mount.count(c)) v1_mount[c] = mount_point;
    if (fstype == "cgroup2" && v2_mount.empty()) v2_mount = mount_point;
  }
  Hierarchies h;
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), rel = line.substr(b + 1);
    const std::string tail = rel == "/" ? "" : rel;
    for (auto& [c, mount] : v1_mount)
      if (has_word(controllers, c, ',')) h.v1[c] = mount + tail;
    if (line.rfind("0::", 0) == 0 && !v2_mount.empty()) {
      h.v2 = v2_mount + tail;
      if (!tail.empty()) h.v2_parent = v2_mount + tail.substr(0, tail.rfind('/'));
    }
  }
  return h;
}

std::string unique_name(const std::string& tag) {
  static std::atomic<int> counter{0};
  return "kevolve-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

// Folders kevolve-<tag>-<pid>-<n> under `parent` whose evaluator <pid> is gone (it was killed before it
// could remove them): removed when empty (rmdir refuses a cgroup that still holds processes).
void sweep_orphans(const std::string& parent) {
  DIR* d = opendir(parent.c_str());
  if (!d) return;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind("kevolve-", 0) != 0) continue;
    const size_t last = n.rfind('-');
    const size_t before = last == std::string::npos || last == 0 ? std::string::npos : n.rfind('-', last - 1);
    if (before == std::string::npos) continue;
    const pid_t owner = static_cast<pid_t>(std::atol(n.substr(before + 1, last - before - 1).c_str()));
    if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) rmdir((parent + "/" + n).c_str());
  }
  closedir(d);
}

// Sleeps a little longer each time: the first checks come within microseconds (freezing a few processes
// takes about that), a long wait costs little CPU.
struct Backoff {
  std::chrono::microseconds step{20};
  void wait() {
    std::this_thread::sleep_for(step);
    if (step < std::chrono::milliseconds(2)) step *= 2;
  }
};

// The v2 parent to make the cgroup under: `own` when its subtree can hand pids and memory on (or is made
// to), else its parent (a sibling of `own`) when that one's subtree hands them on, else `own` without them.
std::string v2_parent_for(const Hierarchies& h, bool& controllers) {
  auto offers = [](const std::string& dir) {
    const std::string sub = first_line(dir + "/cgroup.subtree_control");
    return has_word(sub, "pids", ' ') && has_word(sub, "memory", ' ');
  };
  controllers = true;
  if (offers(h.v2)) return h.v2;
  if (has_word(first_line(h.v2 + "/cgroup.controllers"), "pids", ' ') &&
      write_text(h.v2 + "/cgroup.subtree_control", "+pids +memory") == 0)
    return h.v2;  // the root cgroup (or a cgroup without processes of its own) may hand them on
  if (!h.v2_parent.empty() && offers(h.v2_parent)) return h.v2_parent;
  controllers = false;
  return h.v2;
}

}  // namespace

Expected<EvalCgroup> EvalCgroup::create(const std::string& tag, const CgroupLimits& limits) {
  if (geteuid() != 0) return Expected<EvalCgroup>::failure(Errc::unavailable, "making a cgroup needs root");
  const Hierarchies h = find_hierarchies();
  const bool v1_freezer = h.v1.count("freezer") > 0;
  // v2 when the unified hierarchy holds the controllers (pure v2), or is all there is.
  const bool use_v2 = !h.v2.empty() && (!v1_freezer || has_word(first_line(h.v2 + "/cgroup.controllers"), "pids", ' '));
  if (!use_v2 && !v1_freezer)
    return Expected<EvalCgroup>::failure(Errc::unavailable, "no cgroup hierarchy is mounted for this process");
  EvalCgroup g;
  g.name_ = unique_name(tag);
  g.memory_asked_ = limits.memory_bytes > 0;
  auto fail = [&](const std::string& why) {
    g.remove();
    return Expected<EvalCgroup>::failure(Errc::unavailable, why);
  };
  auto make = [&](const std::string& parent) -> std::string {
    sweep_orphans(parent);
    const std::string dir = parent + "/" + g.name_;
    if (mkdir(dir.c_str(), 0755) != 0) return "";
    g.folders_.push_back(dir);
    return dir;
  };
  auto open_enter = [&](const std::string& dir) {
    const int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) g.enter_fds_.push_back(fd);
    return fd >= 0;
  };
  if (use_v2) {
    g.version_ = 2;
    bool controllers = false;
    const std::string parent = v2_parent_for(h, controllers);
    const std::string dir = make(parent);
    if (dir.empty()) return fail("cannot make " + parent + "/" + g.name_ + ": " + std::strerror(errno));
    if (!open_enter(dir)) return fail("cannot open " + dir + "/cgroup.procs: " + std::strerror(errno));
    g.procs_ = dir + "/cgroup.procs";
    if (exists(dir + "/cgroup.freeze")) g.freezer_ = dir + "/cgroup.freeze";
    if (exists(dir + "/cgroup.kill")) g.kill_file_ = dir + "/cgroup.kill";
    if (controllers && limits.pids_max > 0 && write_text(dir + "/pids.max", std::to_string(limits.pids_max)) == 0)
      g.pids_max_ = limits.pids_max;
    if (controllers && limits.memory_bytes > 0 &&
        write_text(dir + "/memory.max", std::to_string(limits.memory_bytes)) == 0) {
      g.memory_bytes_ = limits.memory_bytes;
      write_text(dir + "/memory.swap.max", "0");  // absent without swap accounting
    }
  } else {
    g.version_ = 1;
    for (const char* c : {"freezer", "pids", "memory"}) {
      auto it = h.v1.find(c);
      if (it == h.v1.end()) continue;
      const std::string dir = make(it->second);
      if (dir.empty()) {
        if (std::strcmp(c, "freezer") == 0)
          return fail("cannot make " + it->second + "/" + g.name_ + ": " + std::strerror(errno));
        continue;  // pids or memory not delegated here: said by describe()
      }
      if (!open_enter(dir)) return fail("cannot open " + dir + "/cgroup.procs: " + std::strerror(errno));
      if (std::strcmp(c, "freezer") == 0) {
        g.procs_ = dir + "/cgroup.procs";
        g.freezer_ = dir + "/freezer.state";
      } else if (std::strcmp(c, "pids") == 0 && limits.pids_max > 0) {
        if (write_text(dir + "/pids.max", std::to_string(limits.pids_max)) == 0) g.pids_max_ = limits.pids_max;
      } else if (std::strcmp(c, "memory") == 0 && limits.memory_bytes > 0) {
        if (write_text(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes)) == 0) {
          g.memory_bytes_ = limits.memory_bytes;
          write_text(dir + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes));  // no swap beyond
        }
      }
    }
  }
  if (g.freezer_.empty()) return fail("the cgroup " + g.name_ + " has no freezer (kernel older than 5.2)");
  return Expected<EvalCgroup>(std::move(g));
}

EvalCgroup::EvalCgroup(EvalCgroup&& o) noexcept { *this = std::move(o); }

EvalCgroup& EvalCgroup::operator=(EvalCgroup&& o) noexcept {
  if (this == &o) return *this;
  if (!folders_.empty()) remove();
  close_fds();
  version_ = o.version_;
  name_ = std::move(o.name_);
  folders_ = std::move(o.folders_);
  procs_ = std::move(o.procs_);
  freezer_ = std::move(o.freezer_);
  kill_file_ = std::move(o.kill_file_);
  enter_fds_ = std::move(o.enter_fds_);
  memory_bytes_ = o.memory_bytes_;
  memory_asked_ = o.memory_asked_;
  seen_ = std::move(o.seen_);
  pids_max_ = o.pids_max_;
  frozen_ = o.frozen_;
  o.folders_.clear();
  o.enter_fds_.clear();
  o.version_ = 0;
  return *this;
}

EvalCgroup::~EvalCgroup() {
  if (!folders_.empty()) remove();
  close_fds();
}

void EvalCgroup::close_fds() {
  for (int fd : enter_fds_) close(fd);
  enter_fds_.clear();
}

int EvalCgroup::enter_from_child() const {
  for (int fd : enter_fds_)
    if (write(fd, "0", 1) < 0) return errno;  // "0": the writing process itself
  return enter_fds_.empty() ? ENOENT : 0;
}

bool EvalCgroup::adopt(pid_t pid) const {
  const std::string text = std::to_string(pid);
  if (enter_fds_.empty()) return false;
  for (int fd : enter_fds_)
    if (write(fd, text.data(), text.size()) < 0) return false;
  return true;
}

namespace {

// The sub-folders of a cgroup folder (cgroups made inside it), deepest last.
std::vector<std::string> subfolders(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  return out;
}

void collect_pids(const std::string& dir, std::vector<pid_t>& out, int depth) {
  std::ifstream f(dir + "/cgroup.procs");
  for (long p; f >> p;) out.push_back(static_cast<pid_t>(p));
  if (depth < 16)
    for (const auto& sub : subfolders(dir)) collect_pids(sub, out, depth + 1);
}

// rmdir of `dir` after every cgroup made inside it (a runner may have made its own memory cgroup there).
bool remove_tree(const std::string& dir, int depth) {
  if (depth < 16)
    for (const auto& sub : subfolders(dir)) remove_tree(sub, depth + 1);
  return rmdir(dir.c_str()) == 0 || errno == ENOENT;
}

}  // namespace

std::vector<pid_t> EvalCgroup::pids() const {
  std::vector<pid_t> out;
  if (!procs_.empty()) collect_pids(procs_.substr(0, procs_.rfind('/')), out, 0);  // and every cgroup inside
  return out;
}

bool EvalCgroup::freeze() {
  if (freezer_.empty()) return false;
  if (write_text(freezer_, version_ == 2 ? "1" : "FROZEN") != 0) return false;
  frozen_ = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  const std::string events = folders_.empty() ? "" : folders_.front() + "/cgroup.events";
  for (Backoff b;; b.wait()) {
    const std::string state = read_text(version_ == 2 ? events : freezer_);
    if (version_ == 2 ? state.find("frozen 1") != std::string::npos : state.rfind("FROZEN", 0) == 0) {
      // Stable while frozen: one that ends on its own later (a CLONE_PARENT child of ours) is still reaped.
      for (pid_t p : pids())
        if (seen_.size() < 4096 && std::find(seen_.begin(), seen_.end(), p) == seen_.end()) seen_.push_back(p);
      return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
}

bool EvalCgroup::thaw() {
  if (freezer_.empty()) return false;
  const bool ok = write_text(freezer_, version_ == 2 ? "0" : "THAWED") == 0;
  if (ok) frozen_ = false;
  return ok;
}

bool EvalCgroup::kill_all() {
  if (procs_.empty()) return true;
  std::set<pid_t> killed(seen_.begin(), seen_.end());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool empty_now = false;
  for (Backoff b;; b.wait()) {
    std::vector<pid_t> inside = pids();
    if (inside.empty()) {
      empty_now = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    if (!kill_file_.empty() && write_text(kill_file_, "1") == 0) {
      killed.insert(inside.begin(), inside.end());
      continue;
    }
    // No cgroup.kill: frozen, nothing inside can fork while its members are listed and killed; the
    // kernel lets a frozen task die only once thawed.
    freeze();
    for (pid_t p : pids()) {
      kill(p, SIGKILL);
      killed.insert(p);
    }
    thaw();
  }
  if (frozen_) thaw();
  // Those that were this process's children (the runner's CLONE_PARENT children) are reaped: a task leaves
  // cgroup.procs a moment before it becomes a zombie, hence the short wait; ECHILD: not a child of ours.
  for (pid_t p : killed) {
    Backoff b;
    for (int i = 0; i < 50 && waitpid(p, nullptr, WNOHANG | __WALL) == 0; ++i) b.wait();
  }
  return empty_now;
}

bool EvalCgroup::remove() {
  kill_all();
  close_fds();
  bool all = true;
  for (auto it = folders_.rbegin(); it != folders_.rend(); ++it) {
    bool gone = false;
    // A cgroup whose last process has just died may refuse rmdir for a moment (EBUSY).
    Backoff b;
    for (int i = 0; i < 200 && !gone; ++i, b.wait()) gone = remove_tree(*it, 0);
    all = all && gone;
  }
  folders_.clear();
  procs_.clear();
  freezer_.clear();
  kill_file_.clear();
  return all;
}

std::string EvalCgroup::describe() const {
  std::string s = "cgroup v" + std::to_string(version_) + " " + name_ + " (";
  s += pids_max_ > 0 ? "pids.max " + std::to_string(pids_max_) : "no pids.max";
  if (memory_bytes_ > 0)
    s += ", memory " + std::to_string(memory_bytes_ >> 20) + " MiB";
  else if (memory_asked_)
    s += ", no memory limit (no memory controller here)";
  s += ", freezer";
  if (!kill_file_.empty()) s += ", cgroup.kill";
  return s + ")";
}

}  // namespace kevolve::process
