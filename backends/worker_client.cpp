#include "backends/worker_client.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/records/records_codec.hpp"

namespace kevolve {

std::string sibling_executable(const std::string& name) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / name).string();
}

WorkerClient::~WorkerClient() { stop(); }

Status WorkerClient::start(const std::string& executable) {
  exe_ = executable;
  if (access(executable.c_str(), X_OK) != 0) {
    return Status::failure(Errc::unavailable, "worker executable " + executable + " is missing or not executable");
  }
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
    return Status::failure(Errc::unavailable, std::string("pipe: ") + std::strerror(errno));
  }
  pid_ = fork();
  if (pid_ < 0) {
    return Status::failure(Errc::unavailable, std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    for (auto& [name, value] : env_) setenv(name.c_str(), value.c_str(), 1);
    execl(executable.c_str(), executable.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_ = in[1];
  from_ = out[0];
  signal(SIGPIPE, SIG_IGN);
  return Status::success();
}

EvalResult WorkerClient::evaluate(const EvalRequest& q) {
  EvalResult r;
  r.status = EvalStatus::harness_error;
  r.reason = "worker";
  wire::Writer w;
  encode(w, q);
  if (!wire::write_frame(to_, w.bytes())) {
    r.message = "the evaluator worker " + exe_ + " is not running";
    return r;
  }
  auto frame = wire::read_frame(from_);
  if (!frame) {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) pid_ = -1;
    r.message = "the evaluator worker " + exe_ + " died" +
                (WIFSIGNALED(status) ? std::string(" with signal ") + strsignal(WTERMSIG(status)) : std::string());
    return r;
  }
  try {
    wire::Reader rd(*frame);
    decode(rd, r);
  } catch (const wire::DecodeError& e) {
    r = EvalResult{};
    r.status = EvalStatus::harness_error;
    r.reason = "protocol";
    r.message = std::string("malformed reply from the evaluator worker: ") + e.what();
  }
  return r;
}

EvalResult WorkerClient::evaluate_in(const std::string& executable, const EvalRequest& q) {
  if (to_ < 0) {
    if (auto started = start(executable); !started) {
      stop();
      EvalResult r;
      r.status = EvalStatus::harness_error;
      r.reason = "worker";
      r.message = started.message;
      r.detectors = q.options.detectors;
      return r;
    }
  }
  EvalResult e = evaluate(q);
  if (e.status == EvalStatus::harness_error && e.reason == "worker") stop();
  return e;
}

void WorkerClient::stop() {
  if (to_ >= 0) {
    close(to_);
    to_ = -1;
  }
  if (from_ >= 0) {
    close(from_);
    from_ = -1;
  }
  if (pid_ > 0) {
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

}  // namespace kevolve
