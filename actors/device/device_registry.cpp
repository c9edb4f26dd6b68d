#include "runtime/records/backend_kind.hpp"
#include "actors/device/device_registry.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/seconds_text.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <memory>
#include <thread>
#include <unistd.h>

#include "actors/farm/farm.hpp"
#include "backends/backend.hpp"
#include "backends/build_target.hpp"
#include "backends/device_info.hpp"
#include "runtime/records/records_codec.hpp"

namespace kevolve {

double null_fitness(const Params& p) {
  uint64_t h = 1469598103934665603ull;
  for (auto& [k, v] : p)
    for (char c : k + "=" + v + ";") h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return 0.5 + static_cast<double>(h % 4000) / 1000.0;
}

namespace {

struct DeviceState {
  DeviceSetup setup;
  std::unique_ptr<Backend> backend;
  std::map<std::string, ProblemSpec> specs;
  int ledger = -1;
  ~DeviceState() {
    if (ledger >= 0) close(ledger);
  }
  static inline const char* name = "device";
};

EvalResult null_eval(DeviceState& st, const EvalJob& job) {
  if (st.setup.null_delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(st.setup.null_delay_ms));
  EvalResult r;
  r.status = EvalStatus::ok;
  r.trials = 5;
  r.reference.median_ms = 1.0;
  r.speedup = null_fitness(job.params);
  r.candidate.median_ms = r.reference.median_ms / r.speedup;
  if (st.ledger >= 0) {
    const std::string line = job.search + " " + std::to_string(job.node) + "\n";
    if (write(st.ledger, line.data(), line.size()) < 0)
      log::warn("device") << "cannot write the evaluation ledger: " << std::strerror(errno);
  }
  return r;
}

// Writes the job's files into a fresh folder and points `b` there (artifact and dir). Returns the folder.
Expected<std::string> unpack(const EvalJob& job, BuiltCandidate& b) {
  using R = Expected<std::string>;
  std::string dir = (std::filesystem::temp_directory_path() / "kevolve-remote-XXXXXX").string();
  if (!mkdtemp(dir.data())) return R::failure(std::string("mkdtemp: ") + std::strerror(errno));
  for (auto& [name, data] : job.files) {
    if (name.find('/') != std::string::npos || name == "." || name == "..")
      return R::failure("bad file name '" + name + "'");
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f << data;
    if (!f) return R::failure("writing " + dir + "/" + name);
  }
  b.dir = dir;
  if (!b.build.artifact.empty()) {
    std::filesystem::path a(b.build.artifact);
    if (job.files.count(a.filename().string())) b.build.artifact = dir + "/" + a.filename().string();
  }
  return R(dir);
}

// The job was built for another machine (another instruction set or GPU architecture): build it here,
// for this device, and evaluate that build. The verdict's profile says so.
EvalResult rebuild_and_evaluate(DeviceState& st, const ProblemSpec& spec, const EvalJob& job) {
  EvalOptions o = job.options;
  const std::string& t = st.setup.target;
  if (t.rfind("cuda:sm_", 0) == 0) o.arch = t.substr(5);
  BuiltCandidate b = build_candidate(st.setup.backend, job.candidate, o);
  EvalResult r = b.verdict ? *b.verdict : st.backend->evaluate(spec, b, o);
  remove_build_dir(b.dir);
  r.profile = "rebuilt on this evaluator for " + t + " (the node built it for " + job.target + ")\n" + r.profile;
  return r;
}

// One job on this device: the null backend's synthetic verdict, the candidate as built, a rebuild for this
// device's target, or an evaluation from a private copy of files built on another node.
EvalResult evaluate_job(DeviceState& st, const EvalJob& job) {
  if (!backend_traits(job.backend).evaluates) return null_eval(st, job);
  auto it = st.specs.find(job.problem);
  if (it == st.specs.end() || !st.backend) {
    EvalResult r;
    r.status = EvalStatus::harness_error;
    r.reason = "device";
    r.message = "this device has no spec for problem '" + job.problem + "' or no " + job.backend + " backend";
    return r;
  }
  BuiltCandidate b;
  b.build = job.build.build;
  b.dir = job.build.dir;
  b.entry = job.build.entry;
  if (!st.setup.target.empty() && !job.target.empty() && job.target != st.setup.target && !job.candidate.source.empty())
    return rebuild_and_evaluate(st, it->second, job);
  if (job.files.empty()) return st.backend->evaluate(it->second, b, job.options);
  // Built on another node: evaluate from a private copy of the build folder.
  auto local = unpack(job, b);
  if (!local) {
    EvalResult r;
    r.status = EvalStatus::harness_error;
    r.reason = "device";
    r.message = "could not write the candidate's files on this evaluator: " + local.error();
    return r;
  }
  EvalResult r = st.backend->evaluate(it->second, b, job.options);
  std::error_code ec;
  std::filesystem::remove_all(*local, ec);
  return r;
}

device_actor::behavior_type device(device_actor::stateful_pointer<DeviceState> self, DeviceSetup setup) {
  self->state.setup = setup;
  if (backend_traits(setup.backend).evaluates) self->state.backend = make_backend(setup.backend, setup.index);
  if (!setup.null_ledger.empty())
    self->state.ledger = open(setup.null_ledger.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  return {
      [self](atoms::spec_atom, const std::string& problem, const std::string& blob) {
        std::vector<char> b(blob.begin(), blob.end());
        wire::Reader r(b);
        ProblemSpec spec;
        decode(r, spec);
        self->state.specs[problem] = std::move(spec);
      },
      [self](atoms::eval_atom, const EvalJob& job) -> EvalResult {
        const auto t0 = std::chrono::steady_clock::now();
        EvalResult r = evaluate_job(self->state, job);
        r.device_class = self->state.setup.device_class;
        // The device's share of the evaluation's timeline (actors/node/node_actor.cpp adds the rest).
        r.profile += "on the device: " + seconds_text(std::chrono::steady_clock::now() - t0) +
                     " (the build staged, the worker started or reused, the evaluator's phases below or above)\n";
        return r;
      },
  };
}

struct RegistryState : FarmState<device_actor, atoms::eval_atom, EvalJob, EvalResult> {
  static inline const char* name = "device-registry";
};

device_actor::behavior_type registry(device_actor::stateful_pointer<RegistryState> self, DeviceSetup setup) {
  for (int i = 0; i < setup.devices; ++i) {
    DeviceSetup one = setup;
    one.index = i;
    if (one.device_class.empty()) one.device_class = local_device_class(setup.backend, i);
    // Evaluations block on a worker process: such devices get threads of their own; null devices only
    // block when they simulate evaluation time.
    const bool blocking = backend_traits(setup.backend).evaluates || setup.null_delay_ms > 0;
    self->state.workers.push_back(blocking ? self->spawn<caf::detached + caf::linked>(device, one)
                                           : self->spawn<caf::linked>(device, one));
    self->state.busy.push_back(0);
  }
  return {
      [self](atoms::spec_atom, const std::string& problem, const std::string& blob) {
        for (auto& w : self->state.workers) self->send(w, atoms::spec_atom::value, problem, blob);
      },
      [self](atoms::eval_atom, EvalJob& job) -> caf::typed_response_promise<EvalResult> {
        auto rp = self->make_response_promise<EvalResult>();
        self->state.queue.emplace_back(std::move(job), rp);
        farm_dispatch<std::remove_pointer_t<decltype(self)>, RegistryState, atoms::eval_atom, EvalJob, EvalResult>(
            self, self->state);
        return rp;
      },
  };
}

}  // namespace

device_actor spawn_device(caf::actor_system& sys, const DeviceSetup& setup) {
  return backend_traits(setup.backend).evaluates || setup.null_delay_ms > 0 ? sys.spawn<caf::detached>(device, setup)
                                                                            : sys.spawn(device, setup);
}

device_actor spawn_device_registry(caf::actor_system& sys, const DeviceSetup& setup) {
  return sys.spawn(registry, setup);
}

}  // namespace kevolve
