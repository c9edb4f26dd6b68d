// A built candidate on its way to a device (build farm -> node -> device registry -> device, and over a
// cluster link to an evaluator): plain records, with their field lists in fields.hpp.
#pragma once
#include <map>
#include <string>

#include "runtime/records/candidate.hpp"
#include "runtime/records/eval_request.hpp"
#include "runtime/records/node.hpp"

namespace kevolve {

// build farm -> node. When `decided`, `verdict` is final (compile_error, rejected) and no device is needed.
struct BuildOutcome {
  bool decided = false;
  EvalResult verdict;
  BuildResult build;
  std::string dir;  // private build folder (removed by the node once evaluated)
  std::string entry;
};

// node -> device registry -> device.
struct EvalJob {
  std::string search;
  uint64_t node = 0;
  std::string backend;
  std::string problem;  // problem name; devices get the spec from the search's registration
  Params params;        // the node's parameters (for logs, and the null backend's synthetic fitness)
  BuildOutcome build;
  EvalOptions options;
  // Set when the job goes to an evaluator on another node: the files of build.dir by name. The
  // evaluator writes them into a folder of its own and evaluates from there.
  std::map<std::string, std::string> files;
  // What the build was made for (backends/build_target.hpp) and the candidate itself: an evaluator whose
  // own target differs rebuilds it from source instead of running a binary built for another machine.
  std::string target;
  Candidate candidate;
  // [search] device_class: only a device whose class (DeviceInfo::device_class) contains this text takes the
  // job; "" = any device of the backend.
  std::string device_class;
};

}  // namespace kevolve
