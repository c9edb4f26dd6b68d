// The coordinator's device registry when devices live in other processes (`kevolve node`). It speaks
// the device interface to the search like the local registry, and:
//  - takes devices that evaluators register (through their links' bridges), sends them the problem specs, and
//    gives them work at once;
//  - keeps one job per device (back-pressure: the rest wait in its queue), routes a job only to devices
//    of the job's backend, ships the build folder's files with each job;
//  - watches every device: when its evaluator dies or its connection is cut, the job it held goes back
//    to the front of the queue (the search sees one verdict per node, whichever device gives it); a
//    job that gets no answer within `eval_timeout_s` is re-queued and the device dropped;
//  - answers the console's commands (runtime/views/console_service).
#pragma once
#include <memory>

#include "storage/store.hpp"
#include "actors/protocol/cluster.hpp"

namespace kevolve {

struct ClusterRegistrySetup {
  std::shared_ptr<Store> store;  // read by console commands
  double eval_timeout_s = 900;
  int max_attempts = 3;  // a job re-queued this many times is answered with a harness error
};

cluster_registry_actor spawn_cluster_registry(caf::actor_system& sys, ClusterRegistrySetup setup);

}  // namespace kevolve
