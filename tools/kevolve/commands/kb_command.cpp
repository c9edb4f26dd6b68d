#include "tools/kevolve/commands/kb_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "knowledge/hardware_profile.hpp"
#include "knowledge/knowledge_base.hpp"
#include "knowledge/template_library.hpp"

namespace kevolve::cli {

namespace {

// kb search: documents ranked for a query, as the operator would see them.
void add_kb_search(CLI::App* kb, int& exit_code) {
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

// kb template: one kernel template rendered, at its defaults or at the values given with --set.
void add_kb_template(CLI::App* kb, int& exit_code) {
  struct TemplateArgs {
    std::string problem, backend = "cuda", hardware, root;
    std::vector<std::string> sets;
    bool list = false;
  };
  auto ta = std::make_shared<TemplateArgs>();
  auto* tpl = kb->add_subcommand("template", "Print a kernel template rendered at its defaults (or at --set values)");
  tpl->add_option("problem", ta->problem, "Problem the template is for (a folder of knowledge/templates/<backend>/)")
      ->required();
  tpl->add_option("--backend", ta->backend, "Template family: cpu, cuda or hip")->capture_default_str();
  tpl->add_option("--hardware", ta->hardware,
                  "Target whose numbers the template sees (a folder of knowledge/hardware/, e.g. nvidia-hopper)");
  tpl->add_option("--set", ta->sets, "NAME=VALUE for one parameter (repeatable); the others keep their defaults");
  tpl->add_flag("--params", ta->list, "List the parameters, their values and defaults instead of the source");
  tpl->add_option("--knowledge", ta->root,
                  "Knowledge folder (default: $KEVOLVE_KNOWLEDGE, ./knowledge, the installed copy)");
  tpl->callback([ta, &exit_code] {
    auto fail = [&](const std::string& m) {
      std::cerr << "kevolve kb template: " << m << "\n";
      exit_code = 2;
    };
    const std::vector<std::string> roots =
        ta->root.empty() ? default_knowledge_roots() : std::vector<std::string>{ta->root};
    auto t = find_template(ta->backend, ta->problem, roots);
    if (!t) return fail(t.error());
    if (!ta->hardware.empty()) {
      std::string dir;
      for (auto& r : roots)
        if (std::filesystem::is_directory(r + "/hardware/" + ta->hardware)) {
          dir = r;
          break;
        }
      if (dir.empty()) return fail("--hardware " + ta->hardware + ": no such folder under knowledge/hardware/");
      auto hw = load_hardware(dir, ta->hardware);
      if (!hw) return fail(hw.error());
      t->hardware = hw->numbers;
    }
    Params p = t->defaults();
    for (auto& kv : ta->sets) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) return fail("--set " + kv + ": expected NAME=VALUE");
      const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
      auto def = std::find_if(t->params.begin(), t->params.end(), [&](auto& d) { return d.name == name; });
      if (def == t->params.end()) return fail("--set " + kv + ": the template has no parameter '" + name + "'");
      if (std::find(def->values.begin(), def->values.end(), value) == def->values.end()) {
        std::string allowed;
        for (auto& v : def->values) allowed += (allowed.empty() ? "" : ", ") + v;
        return fail("--set " + kv + ": '" + value + "' is not one of " + name + "'s values (" + allowed + ")");
      }
      p[name] = value;
    }
    if (ta->list) {
      for (auto& d : t->params) {
        std::cout << d.name << ":";
        for (size_t i = 0; i < d.values.size(); ++i)
          std::cout << " " << (i == d.default_index ? "[" + d.values[i] + "]" : d.values[i]);
        std::cout << "\n";
      }
      for (auto& c : t->constraints) std::cout << "constraint: " << c << "\n";
      exit_code = 0;
      return;
    }
    if (auto why = t->violated(p); !why.empty()) return fail("the parameters break the constraint " + why);
    auto src = t->render(p);
    if (!src) return fail(src.error());
    std::cout << *src;
    exit_code = 0;
  });
}

}  // namespace

void add_kb_command(CLI::App& app, int& exit_code) {
  auto* kb = app.add_subcommand("kb", "The knowledge base (hardware notes, optimisation patterns, debugging methods)");
  kb->require_subcommand(1);
  add_kb_search(kb, exit_code);
  add_kb_template(kb, exit_code);
}

}  // namespace kevolve::cli
