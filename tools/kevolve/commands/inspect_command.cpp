#include "tools/kevolve/commands/inspect_command.hpp"

#include <iostream>

#include "runtime/config/run_config.hpp"
#include "runtime/llm/journal.hpp"
#include "storage/store.hpp"

namespace kevolve::cli {

namespace {

// The search's LLM journal: every request and reply, used or not, with its tokens, and the totals.
int print_journal(const RunConfig& c) {
  if (c.llm.journal.empty()) {
    std::cerr << "kevolve inspect: the config has no [llm] journal (and no store to put one beside)\n";
    return 2;
  }
  auto entries = llm::read_journal(c.llm.journal, c.search_id);
  if (!entries) {
    std::cerr << "kevolve inspect: " << entries.error() << "\n";
    return 2;
  }
  int64_t replies = 0, used = 0, in = 0, out = 0, estimated = 0;
  for (auto& e : *entries) {
    replies += e.has_reply;
    used += e.outcome.rfind("used", 0) == 0;
    in += e.input_tokens;
    out += e.output_tokens;
    estimated += e.estimated_tokens;
  }
  std::cout << "LLM journal of " << c.search_id << " (" << c.llm.journal << "): " << entries->size() << " requests, "
            << replies << " replies (" << used << " used), " << in << " input + " << out << " output + " << estimated
            << " estimated tokens\n";
  for (auto& e : *entries) std::cout << "\n" << llm::format_journal_entry(e);
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "inspect",
      "Show one node of a stored search: its record and artifacts (prompt, reply, source, report...), or with "
      "--journal the search's LLM requests and replies");
  auto config = std::make_shared<std::string>();
  auto id = std::make_shared<uint64_t>(0);
  auto artifact = std::make_shared<std::string>();
  auto store_path = std::make_shared<std::string>();
  cmd->add_option("config", *config, "The search's config")->required()->check(CLI::ExistingFile);
  auto journal = std::make_shared<bool>(false);
  cmd->add_option("node", *id, "Node id (required unless --journal)");
  cmd->add_flag("--journal", *journal,
                "Print the search's LLM journal: every request and reply, used or not, with its tokens");
  cmd->add_option("--artifact", *artifact,
                  "Print only this artifact (source, prompt, reply, report, diagnosis, compile_log, runner_log)");
  cmd->add_option("--store", *store_path, "Store folder (overrides [store] path)");
  cmd->callback([=, &exit_code] {
    auto cfg = load_run_config(*config);
    if (!cfg) {
      std::cerr << "kevolve inspect: " << cfg.error() << "\n";
      exit_code = 2;
      return;
    }
    if (*journal) {
      exit_code = print_journal(*cfg);
      return;
    }
    if (*id == 0) {
      std::cerr << "kevolve inspect: a node id is required (or --journal)\n";
      exit_code = 2;
      return;
    }
    auto store = Store::open(store_path->empty() ? cfg->store : *store_path, true);
    if (!store) {
      std::cerr << "kevolve inspect: " << store.error() << "\n";
      exit_code = 2;
      return;
    }
    auto found = (*store)->node(cfg->search_id, *id);  // one point read, whatever the search's length
    if (!found) {
      if (found.code() == Errc::not_found)
        std::cerr << "kevolve inspect: search '" << cfg->search_id << "' has no node " << *id << "\n";
      else
        std::cerr << "kevolve inspect: " << found.error() << " (see `kevolve store verify`)\n";
      exit_code = 2;
      return;
    }
    const NodeRecord* n = &*found;
    if (!artifact->empty()) {
      auto a = (*store)->artifact(cfg->search_id, *id, *artifact);
      if (!a) {
        std::cerr << "kevolve inspect: " << a.error() << "\n";
        exit_code = 2;
        return;
      }
      std::cout << *a;
      exit_code = 0;
      return;
    }
    std::cout << "node " << n->id << " of " << cfg->search_id << ": " << n->op;
    for (auto p : n->parents) std::cout << " " << p;
    std::cout << "\nstate: " << node_state_name(n->state) << ", status: " << status_name(n->status)
              << (n->reason.empty() ? "" : " [" + n->reason + "]") << ", fitness " << n->fitness << "\n";
    if (!n->message.empty()) std::cout << "message: " << n->message << "\n";
    std::cout << "params:";
    for (auto& [k, v] : n->params) std::cout << " " << k << "=" << v;
    std::cout << "\n";
    for (const char* kind :
         {"prompt", "reply", "source", "report", "diagnosis", "compile_log", "profile", "runner_log"})
      if (auto a = (*store)->artifact(cfg->search_id, *id, kind))
        std::cout << "\n===== " << kind << " =====\n" << *a << "\n";
    exit_code = 0;
  });
}

}  // namespace kevolve::cli
