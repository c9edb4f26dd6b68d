// The console's commands, answered on the coordinator from a snapshot of what it knows (the store, the
// live searches, the devices). Pure C++: the registry actor builds the view and calls this.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/store.hpp"
#include "runtime/records/device_info.hpp"
#include "runtime/records/search_status.hpp"

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

// The whole-tree JSON of each search (`tree SEARCH --json`, what an open dashboard page asks on every
// update), kept by the registry between commands: it reads every node from the store, so with many open
// pages on a large search it is rebuilt at most once per kTreeJsonMaxAge while the search's counts change
// (pages see the tree at most that old), and once per kTreeJsonUnchangedAge while they do not (a node moving
// along its lifecycle in flight changes no count).
struct TreeCache {
  static constexpr std::chrono::milliseconds kTreeJsonMaxAge{2000};
  static constexpr std::chrono::milliseconds kTreeJsonUnchangedAge{30000};
  struct Entry {
    std::string json;
    std::string state;  // the live status it was built from (counts, finished): unchanged -> still true
    std::chrono::steady_clock::time_point built;
  };
  std::map<std::string, Entry> by_search;
};

struct ClusterView {
  std::shared_ptr<Store> store;
  std::shared_ptr<TreeCache> trees;  // may be null: no caching
  std::vector<SearchStatus> live;    // searches running on this node
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
