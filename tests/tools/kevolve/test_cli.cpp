// The kevolve binary as a user meets it: exit codes, messages on bad input, --json keys.
#include <catch2/catch.hpp>

#include <regex>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/store.hpp"
#include "tests/test_support/raw_store.hpp"

namespace {

struct Run {
  int code;
  std::string out;
};

Run run_kevolve(const std::string& args) {
  const std::string cmd = std::string(KEVOLVE_BIN_DIR) + "/kevolve " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

const std::string src = KEVOLVE_SOURCE_DIR;

}  // namespace

TEST_CASE("kevolve without a subcommand or with a bad one fails with usage", "[cli]") {
  auto none = run_kevolve("");
  CHECK(none.code == 2);
  CHECK(none.out.find("A subcommand is required") != std::string::npos);
  CHECK(none.out.find("--help") != std::string::npos);
  auto bad = run_kevolve("frobnicate");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--help") != std::string::npos);
  auto help = run_kevolve("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("eval") != std::string::npos);
}

TEST_CASE("kevolve eval names an unknown problem and a bad spec", "[cli]") {
  auto r = run_kevolve("eval --problems " + src + "/problems --problem nope --candidate " + src +
                       "/problems/core/gelu/naive.cpp");
  CHECK(r.code == 2);
  CHECK(r.out.find("no problem named 'nope'") != std::string::npos);
  r = run_kevolve("eval --problem " + src + "/problems/core/gelu/problem.toml --candidate /no/such/file.cpp");
  CHECK(r.code == 2);
  CHECK(r.out.find("--candidate") != std::string::npos);  // names the option and the file
  CHECK(r.out.find("/no/such/file.cpp") != std::string::npos);
  r = run_kevolve("eval --problem gelu --problems " + src + "/problems --candidate " + src +
                  "/problems/core/gelu/naive.cpp --detector-off everything");
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown detector 'everything'") != std::string::npos);
}

TEST_CASE("kevolve eval --json prints one object with the documented keys", "[cli]") {
  auto r = run_kevolve("eval --json --min-time 0.01 --min-reps 3 --problem " + src +
                       "/tests/fixtures/problems/softmax_small/problem.toml --candidate " + src +
                       "/problems/core/softmax_rows/naive.cpp");
  INFO(r.out);
  CHECK(r.code == 0);
  for (const char* key :
       {"\"status\":\"ok\"", "\"speedup\":", "\"max_abs_err\":", "\"reference_ms\":", "\"candidate_ms\":",
        "\"message\":", "\"reference_threads\":", "\"candidate_threads\":", "\"sandbox\":\""})
    CHECK(r.out.find(key) != std::string::npos);
  CHECK(r.out.find("\"sandbox\":\"\"") == std::string::npos);  // the confinement in force is named
  CHECK(r.out.front() == '{');
}

TEST_CASE("kevolve eval exits 0 on a candidate that fails, and says why", "[cli]") {
  auto r = run_kevolve("eval --problem " + src + "/tests/fixtures/problems/softmax_small/problem.toml --candidate " +
                       src + "/tests/backends/cpu/crashers/segfault.cpp");
  CHECK(r.code == 0);
  CHECK(r.out.find("runtime_error") != std::string::npos);
  CHECK(r.out.find("signal 11") != std::string::npos);  // says why: the signal, by number and name
}

TEST_CASE("kevolve store verify says a sound store is sound, and names a damaged record and a damaged table file",
          "[cli][store]") {
  namespace fs = std::filesystem;
  const std::string dir = (fs::temp_directory_path() / ("kevolve-cli-store-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  {
    auto s = kevolve::Store::open(dir);
    REQUIRE(s);
    kevolve::StoreBatch b;
    kevolve::SearchRecord rec;
    rec.id = "s";
    rec.problem = "gelu";
    b.searches.push_back(rec);
    for (uint64_t i = 1; i <= 200; ++i) {
      kevolve::NodeRecord n;
      n.id = i;
      n.message = std::string(200, 'm');  // some bulk, so that the table file has several blocks
      b.nodes.push_back({"s", n});
      b.artifacts.push_back({"s", {i, "source", std::string(300, 's')}});
    }
    REQUIRE((*s)->write(b));
  }
  kevolve::test::flush_tables(dir);
  auto ok = run_kevolve("store verify " + dir);
  INFO(ok.out);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("1 searches, 200 nodes, 200 artifacts") != std::string::npos);
  CHECK(ok.out.find("ok:") != std::string::npos);
  // kevolve report reads the same store through a config: sound, it exits 0.
  const std::string config = dir + "-report.toml";
  std::ofstream(config) << "[search]\nproblem = \"" << src << "/problems/core/gelu/problem.toml\"\nid = \"s\"\n"
                        << "backend = \"null\"\noperator = \"null\"\n\n[store]\npath = \"" << dir << "\"\n";
  auto sound = run_kevolve("report " + config + " --out " + dir + "-report");
  INFO(sound.out);
  CHECK(sound.code == 0);
  CHECK(sound.out.find("store is damaged") == std::string::npos);

  kevolve::test::put_raw(dir, "nodes", kevolve::test::node_key("s", 17), "damaged");
  auto bad = run_kevolve("store verify " + dir);
  INFO(bad.out);
  CHECK(bad.code == 1);
  CHECK(bad.out.find("1 node record(s) cannot be decoded (the first: key 's' node 17)") != std::string::npos);

  // Bytes changed in the middle of the largest table file, as a failing disk would.
  fs::path largest;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".sst" && (largest.empty() || fs::file_size(e.path()) > fs::file_size(largest)))
      largest = e.path();
  REQUIRE(!largest.empty());
  {
    std::fstream f(largest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(largest) / 3));
    const std::string junk(64, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto torn = run_kevolve("store verify " + dir);
  INFO(torn.out);
  CHECK(torn.code == 1);
  CHECK(torn.out.find("Corruption") != std::string::npos);
  CHECK(torn.out.find(largest.filename().string()) != std::string::npos);  // the file is named
  // The report over the damaged store says so, names the file, and exits 1.
  auto damaged = run_kevolve("report " + config + " --out " + dir + "-report");
  INFO(damaged.out);
  CHECK(damaged.code == 1);
  CHECK(damaged.out.find("the store is damaged") != std::string::npos);
  CHECK(damaged.out.find(largest.filename().string()) != std::string::npos);

  auto none = run_kevolve("store verify " + dir + "-missing");
  CHECK(none.code == 2);
  CHECK(none.out.find("no such store") != std::string::npos);

  // Repair keeps what can be read, says how many node records were lost, and leaves a store that verifies
  // (the damaged record that decodes badly is still named: repair works on blocks, not on our records).
  auto repaired = run_kevolve("store repair " + dir);
  INFO(repaired.out);
  CHECK(repaired.out.find("repaired " + dir) != std::string::npos);
  CHECK(repaired.out.find("Corruption") == std::string::npos);  // the table checksums match again
  // The salvage reads past the damaged block: more records than a plain scan could read before.
  CHECK(repaired.out.find("records salvaged before RocksDB's repair (past 1 damaged region(s))") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(repaired.out, m, std::regex("(\\d+) node record\\(s\\) readable now \\((\\d+) before")));
  CHECK(std::stoi(m[1]) > std::stoi(m[2]));
  CHECK(repaired.out.find("evaluates again the candidates whose records were lost") != std::string::npos);
  auto after = run_kevolve("store verify " + dir);
  INFO(after.out);
  CHECK(after.out.find("Corruption") == std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(dir + "-report");
  fs::remove(config);
}

TEST_CASE("kevolve inspect --journal prints a search's LLM requests and replies, used or not, with their tokens",
          "[cli]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("kevolve-cli-journal-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/run.toml") << "[search]\nproblem = \"softmax_rows\"\nid = \"s\"\noperator = \"llm\"\n"
                                   << "[llm]\nendpoint = \"http://127.0.0.1:1/v1/chat/completions\"\nmodel = \"m\"\n"
                                   << "[store]\npath = \"" << dir << "/store\"\n";
  // No request was sent yet: no journal, said so.
  auto none = run_kevolve("inspect " + dir + "/run.toml --journal");
  CHECK(none.code == 2);
  CHECK(none.out.find("no LLM journal") != std::string::npos);
  std::ofstream(dir + "/store.llm-requests.jsonl")
      << "{\"time\":1790000000,\"search\":\"s\",\"model\":\"m\",\"attempt\":1,\"status\":429,\"class\":\"transient\","
         "\"error\":\"HTTP 429: rate limited\"}\n"
      << "{\"time\":1790000001,\"search\":\"s\",\"model\":\"m\",\"attempt\":2,\"status\":200,\"class\":\"ok\","
         "\"request_id\":\"req-1\",\"finish_reason\":\"length\",\"input_tokens\":900,\"output_tokens\":4096,"
         "\"cache_creation_tokens\":0,\"cache_read_tokens\":0,\"truncated\":true,\"tool_call\":false,\"ref\":\"t-1\","
         "\"text\":\"```cpp\\n#include\"}\n"
      << "{\"time\":1790000001,\"search\":\"s\",\"ref\":\"t-1\",\"outcome\":\"not used: it was cut at the output "
         "limit\"}\n"
      << "{\"time\":1790000002,\"search\":\"other\",\"model\":\"m\",\"attempt\":1,\"status\":200,\"class\":\"ok\","
         "\"input_tokens\":5,\"output_tokens\":5,\"text\":\"another search\"}\n";
  auto j = run_kevolve("inspect " + dir + "/run.toml --journal");
  INFO(j.out);
  CHECK(j.code == 0);
  CHECK(j.out.find("LLM journal of s (" + dir +
                   "/store.llm-requests.jsonl): 2 requests, 1 replies (0 used), 900 "
                   "input + 4096 output + 0 estimated tokens") != std::string::npos);
  CHECK(j.out.find("m, attempt 1, HTTP 429, transient\n    HTTP 429: rate limited") != std::string::npos);
  CHECK(j.out.find("m, attempt 2, HTTP 200, ok, request req-1, finish length, 900 input + 4096 output tokens, cut at "
                   "the token limit\n  not used: it was cut at the output limit\n    ```cpp") != std::string::npos);
  CHECK(j.out.find("another search") == std::string::npos);
  // Without --journal a node id is needed.
  auto bare = run_kevolve("inspect " + dir + "/run.toml");
  CHECK(bare.code == 2);
  CHECK(bare.out.find("a node id is required (or --journal)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kevolve kb template prints a template at its defaults or at the values set and names bad values", "[cli]") {
  const std::string kb = " --knowledge " + src + "/knowledge";
  auto params = run_kevolve("kb template gelu --params" + kb);
  CHECK(params.code == 0);
  CHECK(params.out.find("vec: 1 [4]") != std::string::npos);  // the default in brackets
  auto defaults = run_kevolve("kb template gelu" + kb);
  CHECK(defaults.code == 0);
  CHECK(defaults.out.find("// @kevolve kernel") != std::string::npos);
  CHECK(defaults.out.find("vec=4") != std::string::npos);
  auto set = run_kevolve("kb template gelu --set vec=1 --hardware nvidia-hopper" + kb);
  CHECK(set.code == 0);
  CHECK(set.out.find("vec=1") != std::string::npos);
  auto bad = run_kevolve("kb template gelu --set vec=7" + kb);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("'7' is not one of vec's values (1, 4)") != std::string::npos);
  auto unknown = run_kevolve("kb template gelu --set warp=2" + kb);
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("no parameter 'warp'") != std::string::npos);
  auto missing = run_kevolve("kb template nosuch" + kb);
  CHECK(missing.code == 2);
  CHECK(missing.out.find("no cuda template for problem 'nosuch'") != std::string::npos);
}

TEST_CASE("kevolve report of a search larger than a page can draw counts every node and lists the notable ones",
          "[cli][report]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-cli-report-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "big.toml") << "[search]\nproblem = \"rmsnorm_fwd\"\nbackend = \"null\"\noperator = \"null\"\n"
                                     "max_in_flight = 500\nretime_top = 0\n[strategy]\nname = \"greedy\"\n"
                                     "max_children = 16\n[budget]\nevaluations = 25000\n[store]\npath = \""
                                  << (dir / "store").string() << "\"\n";
  auto r = run_kevolve("run " + (dir / "big.toml").string() + " --out " + (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::ifstream json(dir / "out" / "report.json");
  const std::string report((std::istreambuf_iterator<char>(json)), {});
  CHECK(report.find("\"evaluated\":25000") != std::string::npos);
  std::ifstream html(dir / "out" / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), {});
  std::smatch m;
  REQUIRE(std::regex_search(page, m, std::regex("\"nodes_total\":([0-9]+),\"nodes_shown\":([0-9]+)")));
  CHECK(std::stoll(m[1]) >= 25000);  // the counts cover every node
  CHECK(std::stoll(m[2]) <= 20000);  // the tree lists the notable ones: their ancestors, the fittest, the latest
  CHECK(std::stoll(m[2]) >= 1000);
  fs::remove_all(dir);
}
