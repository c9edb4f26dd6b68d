// The console's commands, answered on the coordinator from a snapshot of what it knows (the store, the
// live searches, the devices). Pure C++: the registry actor builds the view and calls this.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "storage/store.hpp"
#include "actors/protocol/messages.hpp"

namespace kevolve::cluster {

struct DeviceRow {
  DeviceInfo info;
  bool alive = true;
  bool busy = false;
  std::string current;                           // "search node" being evaluated, when busy
  int64_t evaluated = 0;                         // evaluations finished on this device
  double busy_s = 0;                             // seconds spent evaluating since it joined
  double joined_s = 0;                           // seconds since it joined
  double busy_while_queued_s = 0, queued_s = 0;  // utilisation while work was waiting
};

struct ClusterView {
  std::shared_ptr<Store> store;
  std::vector<SearchStatus> live;  // searches running on this node
  std::vector<DeviceRow> devices;
  int64_t queued = 0, dispatched = 0, requeued = 0;
  double uptime_s = 0;
};

// Runs one console command (words[0] is the command). Returns the answer; unknown commands and bad
// arguments answer with an "error: ..." line that says what was expected.
std::string console_command(const std::vector<std::string>& words, const ClusterView& view);

// The command names, for the console's help and completion.
const std::vector<std::string>& console_commands();

}  // namespace kevolve::cluster
