// EvalServer: one `kevolve_py_eval.py --serve` process, kept across evaluations so that torch is imported
// (and the GPU set up) once per device instead of once per candidate. Requests and answers are JSON lines;
// the server's stderr goes to a log file whose tail explains a failure. Each candidate still runs in a
// runner process of its own (the server starts the next one ahead of time).
#pragma once
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "runtime/core/expected.hpp"

namespace kevolve::python {

class EvalServer {
 public:
  EvalServer() = default;
  EvalServer(const EvalServer&) = delete;
  EvalServer& operator=(const EvalServer&) = delete;
  ~EvalServer();
  // The answer line to one evaluation with `args` (kevolve_py_eval.py's one-shot arguments). Starts
  // `python script --serve` on first use and again after it died (a request it died on is sent once more to
  // the new one); one that does not answer within `timeout_s` is killed (its runners die with it). An error
  // says what happened, with the log's tail.
  Expected<std::string> ask(const std::string& python, const std::string& script, const std::vector<std::string>& args,
                            double timeout_s);
  void stop();
  // Set in the server's environment when it starts (CUDA_VISIBLE_DEVICES: the GPU of this device).
  void set_env(std::string name, std::string value) { env_.emplace_back(std::move(name), std::move(value)); }

 private:
  Expected<std::string> ask_once(const std::string& python, const std::string& script,
                                 const std::vector<std::string>& args, double timeout_s);
  std::string start(const std::string& python, const std::string& script);
  std::string log_tail() const;
  bool gone();
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string log_, pending_;
  bool died_ = false;  // the last ask_once found the process gone (not a timeout)
  bool reaped_ = false;
  std::vector<std::pair<std::string, std::string>> env_;
  int status_ = 0;  // its wait status, once reaped
};

}  // namespace kevolve::python
