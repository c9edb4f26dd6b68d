#include "backends/python/eval_server.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/json.hpp"

namespace kevolve::python {

EvalServer::~EvalServer() { stop(); }

std::string EvalServer::start(const std::string& python, const std::string& script) {
  static int n = 0;
  log_ = (std::filesystem::temp_directory_path() / ("kevolve-py-eval-" + std::to_string(getpid()) + "-" + std::to_string(++n) + ".log")).string();
  const int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int in[2], out[2];
  if (log < 0 || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
    if (log >= 0) close(log);
    return std::string("cannot start the Python evaluator: ") + std::strerror(errno);
  }
  pid_ = fork();
  if (pid_ < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(log, 2);
    execlp(python.c_str(), python.c_str(), script.c_str(), "--serve", static_cast<char*>(nullptr));  // "python3": found on PATH
    _exit(127);
  }
  close(log);
  close(in[0]);
  close(out[1]);
  to_ = in[1];
  from_ = out[0];
  pending_.clear();
  signal(SIGPIPE, SIG_IGN);
  return "";
}

std::string EvalServer::log_tail() const {
  std::ifstream f(log_);
  std::stringstream s;
  s << f.rdbuf();
  const std::string all = s.str();
  return all.size() > 1500 ? all.substr(all.size() - 1500) : all;
}

void EvalServer::stop() {
  if (to_ >= 0) { close(to_); to_ = -1; }
  if (from_ >= 0) { close(from_); from_ = -1; }
  if (pid_ > 0) {
    // Closing its stdin ends the serve loop; one that does not end soon is killed.
    for (int i = 0; i < 50 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) usleep(100000);
    if (kill(pid_, 0) == 0) { kill(pid_, SIGKILL); waitpid(pid_, nullptr, 0); }
    pid_ = -1;
  }
  if (!log_.empty()) { std::remove(log_.c_str()); log_.clear(); }
}

Expected<std::string> EvalServer::ask(const std::string& python, const std::string& script, const std::vector<std::string>& args,
                                      double timeout_s) {
  // A server that died just before or while taking the request (killed from outside between two candidates)
  // is replaced and asked once more; one that dies again, or does not answer in time, is the answer.
  auto r = ask_once(python, script, args, timeout_s);
  if (!r && died_) r = ask_once(python, script, args, timeout_s);
  return r;
}

Expected<std::string> EvalServer::ask_once(const std::string& python, const std::string& script, const std::vector<std::string>& args,
                                           double timeout_s) {
  using R = Expected<std::string>;
  died_ = false;
  if (pid_ > 0) {  // died since the last answer (or reaped by someone else): start another
    const pid_t w = waitpid(pid_, nullptr, WNOHANG);
    if (w == pid_ || (w < 0 && errno == ECHILD)) {
      pid_ = -1;
      stop();
    }
  }
  if (pid_ <= 0)
    if (auto err = start(python, script); !err.empty()) { stop(); return R::failure(err); }
  std::string line = "{\"argv\":[";
  for (size_t i = 0; i < args.size(); ++i) line += (i ? "," : "") + json::quote(args[i]);
  line += "]}\n";
  for (size_t off = 0; off < line.size();) {
    const ssize_t w = write(to_, line.data() + off, line.size() - off);
    if (w <= 0) {
      const std::string why = "the Python evaluator is not running: " + log_tail();
      died_ = true;
      stop();
      return R::failure(why);
    }
    off += static_cast<size_t>(w);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return answer;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(pid_, SIGKILL);
      const std::string why = "the Python evaluator gave no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s; killed: " + log_tail();
      stop();
      return R::failure(why);
    }
    pollfd p{from_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) continue;
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    char buf[65536];
    const ssize_t r = read(from_, buf, sizeof buf);
    if (r <= 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      const std::string why = "the Python evaluator exited (" +
                              (WIFSIGNALED(status) ? std::string("signal ") + strsignal(WTERMSIG(status)) : "status " + std::to_string(WEXITSTATUS(status))) +
                              "): " + log_tail();
      died_ = true;
      stop();
      return R::failure(why);
    }
    pending_.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace kevolve::python
