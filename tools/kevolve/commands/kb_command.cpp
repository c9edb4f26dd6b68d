#include "tools/kevolve/commands/kb_command.hpp"

#include <filesystem>
#include <iostream>

#include "knowledge/knowledge_base.hpp"
#include "knowledge/template_library.hpp"

namespace kevolve::cli {

void add_kb_command(CLI::App& app, int& exit_code) {
  auto* kb = app.add_subcommand("kb", "The knowledge base (hardware notes, optimisation patterns, debugging methods)");
  kb->require_subcommand(1);
  auto* search = kb->add_subcommand("search", "Rank knowledge documents for a query (BM25), as the operator would");
  auto query = std::make_shared<KbQuery>();
  auto root = std::make_shared<std::string>();
  search->add_option("query", query->text, "What to look for, in words")->required();
  search->add_option("--hardware", query->hardware,
                     "Only documents for this target (a folder of knowledge/hardware/) or for any");
  search->add_option("--problem", query->problem, "Only documents for this problem or for any");
  search->add_option("-n,--limit", query->limit, "Hits to show")->capture_default_str()->check(CLI::Range(1, 100));
  search->add_option("--knowledge", *root,
                     "Knowledge folder (default: $KEVOLVE_KNOWLEDGE, ./knowledge, the installed copy)");
  search->callback([=, &exit_code] {
    std::string dir = *root;
    if (dir.empty())
      for (auto& r : default_knowledge_roots())
        if (std::filesystem::is_directory(r + "/patterns")) {
          dir = r;
          break;
        }
    auto base = KnowledgeBase::load(dir.empty() ? "knowledge" : dir);
    if (!base) {
      std::cerr << "kevolve kb search: " << base.error() << "\n";
      exit_code = 2;
      return;
    }
    auto hits = (*base)->search(*query);
    if (hits.empty()) std::cout << "no document matches\n";
    for (auto& h : hits) {
      std::cout.precision(3);
      std::cout << h.score << "  " << h.path << "  —  " << h.title << "\n";
      std::string first = h.snippet.substr(0, h.snippet.find('\n'));
      if (!first.empty()) std::cout << "        " << first.substr(0, 150) << "\n";
    }
    exit_code = 0;
  });
}

}  // namespace kevolve::cli
