// Every CPU template of the knowledge base loads, covers a core problem, and renders its defaults.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "knowledge/template_library.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

TEST_CASE("every core problem has a CPU template whose defaults render", "[templates]") {
  const fs::path core = std::string(KEVOLVE_SOURCE_DIR) + "/problems/core";
  for (auto& d : fs::directory_iterator(core)) {
    const std::string name = d.path().filename().string();
    auto t = find_template("cpu", name, {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
    INFO(name << ": " << (t ? "" : t.error()));
    REQUIRE(t);
    CHECK(t->problem == name);
    CHECK(t->params.size() >= 3);
    auto src = t->render(t->defaults());
    REQUIRE(src);
    CHECK(src->find("kevolve_kernel") != std::string::npos);
  }
}

TEST_CASE("template errors name the file and key", "[templates]") {
  const fs::path dir = fs::temp_directory_path() / ("kevolve-tmpl-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.mustache") << "x {{a}}";
  std::ofstream(dir / "template.toml") << "problem = \"p\"\nbackend = \"cpu\"\nsource = \"k.mustache\"\n"
                                          "[[params]]\nname = \"a\"\nvalues = [1, 2]\ndefault = 3\n";
  auto t = load_template(dir.string());
  REQUIRE_FALSE(t);
  CHECK(t.error().find("params[0].default") != std::string::npos);
  fs::remove_all(dir);
}
