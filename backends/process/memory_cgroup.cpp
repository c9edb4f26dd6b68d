#include "backends/process/memory_cgroup.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace kevolve::process {
namespace {

struct Controller {
  std::string folder;  // the process's own memory cgroup, as a path under the mount
  int version = 0;     // 1 or 2; 0: none
};

// Where this process's memory controller lives: v1 (a cgroup mount with the memory option) first, else
// the v2 hierarchy when it offers the memory controller to this process's cgroup.
Controller memory_controller() {
  std::string v1_mount, v2_mount;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
    std::string id, parent, devno, root, mount_point, fstype, source, super;
    pre >> id >> parent >> devno >> root >> mount_point;
    post >> fstype >> source >> super;
    if (fstype == "cgroup" && ("," + super + ",").find(",memory,") != std::string::npos) v1_mount = mount_point;
    if (fstype == "cgroup2" && v2_mount.empty()) v2_mount = mount_point;
  }
  std::string v1_rel, v2_rel;
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (("," + controllers + ",").find(",memory,") != std::string::npos) v1_rel = path;
    if (line.rfind("0::", 0) == 0) v2_rel = path;
  }
  if (!v1_mount.empty() && !v1_rel.empty()) return {v1_mount + (v1_rel == "/" ? "" : v1_rel), 1};
  if (!v2_mount.empty()) {
    const std::string own = v2_mount + (v2_rel == "/" ? "" : v2_rel);
    std::ifstream ctl(own + "/cgroup.controllers");
    std::string words;
    std::getline(ctl, words);
    if ((" " + words + " ").find(" memory ") != std::string::npos) return {own, 2};
  }
  return {};
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

}  // namespace

std::string runner_cgroup_path(pid_t pid) {
  const Controller c = memory_controller();
  return c.version ? c.folder + "/kevolve-runner-" + std::to_string(pid) : "";
}

std::string enter_memory_cgroup(int64_t limit_bytes, std::string& why_not) {
  const Controller c = memory_controller();
  if (!c.version) {
    why_not = "no memory controller is mounted for this process";
    return "";
  }
  const std::string dir = c.folder + "/kevolve-runner-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    why_not = "cannot make " + dir + ": " + std::strerror(errno);
    return "";
  }
  const std::string limit_file = dir + (c.version == 2 ? "/memory.max" : "/memory.limit_in_bytes");
  if (!write_file(limit_file, std::to_string(limit_bytes))) {
    why_not = "cannot write " + limit_file + " (the memory controller is not delegated here)";
    rmdir(dir.c_str());
    return "";
  }
  if (c.version == 2) write_file(dir + "/memory.swap.max", "0");  // optional: absent without swap accounting
  if (!write_file(dir + "/cgroup.procs", std::to_string(getpid()))) {
    why_not = "cannot move the runner into " + dir;
    rmdir(dir.c_str());
    return "";
  }
  return "memory cgroup (v" + std::to_string(c.version) + ") " + std::to_string(limit_bytes >> 20) + " MiB";
}

void remove_runner_cgroup(pid_t pid) {
  const Controller c = memory_controller();
  if (!c.version) return;
  rmdir((c.folder + "/kevolve-runner-" + std::to_string(pid)).c_str());  // fails harmlessly where none is
  // Leftovers of runners whose evaluator was killed: rmdir refuses a cgroup that still has processes.
  if (DIR* d = opendir(c.folder.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, "kevolve-runner-", 15) == 0) rmdir((c.folder + "/" + e->d_name).c_str());
    closedir(d);
  }
}

}  // namespace kevolve::process
