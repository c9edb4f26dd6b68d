#include "backends/python/eval_server.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/json.hpp"

namespace kevolve::python {

EvalServer::~EvalServer() { stop(); }

std::string EvalServer::start(const std::string& python, const std::string& script) {
  std::string path = (std::filesystem::temp_directory_path() / "kevolve-py-eval-XXXXXX.log").string();
  const int log = mkostemps(path.data(), 4, O_CLOEXEC);  // a fresh file of its own (several devices start servers)
  if (log < 0) return std::string("cannot create the Python evaluator's log in $TMPDIR: ") + std::strerror(errno);
  log_ = path;
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {log, in[0], in[1], out[0], out[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
    const std::string why = std::string("cannot start the Python evaluator: pipe: ") + std::strerror(errno);
    close_all();
    return why;
  }
  pid_ = fork();
  if (pid_ < 0) {
    const std::string why = std::string("cannot start the Python evaluator: fork: ") + std::strerror(errno);
    pid_ = -1;
    close_all();
    return why;
  }
  if (pid_ == 0) {
    // A process group of its own: a terminal's Ctrl-C goes to kevolve (which stops the search cleanly),
    // not into the evaluator mid-candidate; a timeout kills the group.
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(log, 2);
    for (auto& [name, value] : env_) setenv(name.c_str(), value.c_str(), 1);
    execlp(python.c_str(), python.c_str(), script.c_str(), "--serve",
           static_cast<char*>(nullptr));  // "python3": found on PATH
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here, so that a kill of the group right after the fork cannot miss
  close(log);
  close(in[0]);
  close(out[1]);
  to_ = in[1];
  from_ = out[0];
  pending_.clear();
  reaped_ = false;
  signal(SIGPIPE, SIG_IGN);
  return "";
}

std::string EvalServer::log_tail() const {
  std::ifstream f(log_, std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(size > 1500 ? size - 1500 : 0);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Reaps the server if it has exited (without waiting); true when it is gone.
bool EvalServer::gone() {
  if (pid_ <= 0 || reaped_) return true;
  const pid_t w = waitpid(pid_, &status_, WNOHANG);
  if (w == pid_ || (w < 0 && errno == ECHILD)) reaped_ = true;
  return reaped_;
}

void EvalServer::stop() {
  if (to_ >= 0) {
    close(to_);
    to_ = -1;
  }
  if (from_ >= 0) {
    close(from_);
    from_ = -1;
  }
  if (pid_ > 0) {
    // Closing its stdin ends the serve loop; one that does not end within 5 s is killed with its group.
    for (int i = 0; i < 50 && !gone(); ++i) usleep(100000);
    if (!gone()) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
    }
    pid_ = -1;
  }
  if (!log_.empty()) {
    std::remove(log_.c_str());
    log_.clear();
  }
}

Expected<std::string> EvalServer::ask(const std::string& python, const std::string& script,
                                      const std::vector<std::string>& args, double timeout_s) {
  // A server that died just before or while taking the request (killed from outside between two candidates)
  // is replaced and asked once more; one that dies again, or does not answer in time, is the answer.
  auto r = ask_once(python, script, args, timeout_s);
  if (!r && died_) r = ask_once(python, script, args, timeout_s);
  return r;
}

Expected<std::string> EvalServer::ask_once(const std::string& python, const std::string& script,
                                           const std::vector<std::string>& args, double timeout_s) {
  using R = Expected<std::string>;
  died_ = false;
  if (pid_ > 0 && gone()) stop();  // died since the last answer: start another
  if (pid_ <= 0)
    if (auto err = start(python, script); !err.empty()) {
      stop();
      return R::failure(err);
    }
  std::string line = "{\"argv\":[";
  for (size_t i = 0; i < args.size(); ++i) line += (i ? "," : "") + json::quote(args[i]);
  line += "]}\n";
  auto died = [&](const std::string& what) {
    gone();
    const std::string why =
        what +
        (reaped_ && WIFSIGNALED(status_) ? " (signal " + std::string(strsignal(WTERMSIG(status_))) + ")"
         : reaped_                       ? " (status " + std::to_string(WEXITSTATUS(status_)) + ")"
                                         : std::string()) +
        ": " + log_tail();
    died_ = true;
    stop();
    return R::failure(why);
  };
  for (size_t off = 0; off < line.size();) {
    const ssize_t w = write(to_, line.data() + off, line.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return died("the Python evaluator is not running");
    off += static_cast<size_t>(w);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return answer;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(-pid_, SIGKILL);  // the server and anything it started in its group; its runners die with it
      const std::string why = "the Python evaluator gave no answer within " +
                              std::to_string(static_cast<int>(timeout_s)) + " s; killed: " + log_tail();
      stop();
      return R::failure(why);
    }
    pollfd p{from_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
    char buf[65536];
    const ssize_t r = read(from_, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return died("the Python evaluator exited");
    pending_.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace kevolve::python
