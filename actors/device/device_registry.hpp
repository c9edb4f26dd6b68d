// Spawns the device registry: one device actor per device (detached: evaluations block on the worker
// process), each evaluating one candidate at a time; the registry queues the rest (back-pressure) and
// broadcasts problem specs. Backend "cpu" drives a kevolve-cpu-eval worker per device; "null" returns
// synthetic results after `null_delay_ms` (engine benchmarks, crash tests), appending "search node"
// lines to `null_ledger` when set.
#pragma once
#include "actors/protocol/device.hpp"

namespace kevolve {

struct DeviceSetup {
  std::string backend = "cpu";
  int devices = 1;
  double null_delay_ms = 0;
  std::string null_ledger;
  std::string target;  // set on an evaluator: jobs built for another target are rebuilt here from source
  // Stamped on every verdict (EvalResult::device_class); the registry fills it from this machine's device
  // when empty, an evaluator from what it registers.
  std::string device_class;
  int index = 0;  // which of this machine's devices (CUDA: the GPU its worker sees)
};

device_actor spawn_device_registry(caf::actor_system& sys, const DeviceSetup& setup);

// One device actor on its own thread (an evaluator node spawns these and registers them remotely).
// A job that carries its build files (EvalJob::files) is evaluated from a private copy of them.
device_actor spawn_device(caf::actor_system& sys, const DeviceSetup& setup);

// The synthetic fitness the null device gives a parameter set (deterministic, in [0.5, 4.5)).
double null_fitness(const Params& p);

}  // namespace kevolve
