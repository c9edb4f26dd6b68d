// Search configs: the shipped ones load; mistakes are named with file, key and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "runtime/config/run_config.hpp"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& text) {
  const auto path = fs::temp_directory_path() / ("kevolve-cfg-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path) << text;
  auto c = load_run_config(path.string());
  fs::remove(path);
  REQUIRE_FALSE(c);
  return c.error();
}

}  // namespace

TEST_CASE("the shipped quickstart config loads with its documented choices", "[config]") {
  auto c = load_run_config(std::string(KEVOLVE_SOURCE_DIR) + "/configs/quickstart.toml");
  REQUIRE(c);
  CHECK(c->problem == "rmsnorm_fwd");
  CHECK(c->backend == "cpu");
  CHECK(c->strategy.name == "greedy");
  CHECK(c->search_id == "rmsnorm_fwd-greedy-s1");
  CHECK(c->budget.max_evaluations > 0);
}

TEST_CASE("config mistakes name the file, key and expectation", "[config]") {
  auto e = error_of("[search]\nproblem = \"gelu\"\n[strategy]\nname = \"annealing\"\n");
  CHECK(e.find("strategy") != std::string::npos);
  CHECK(e.find("annealing") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\nbackend = \"tpu\"\n");
  CHECK(e.find("search.backend") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\n[budget]\nevaluations = -3\n");
  CHECK(e.find("budget.evaluations") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\n[budget]\nevaluatons = 3\n");
  CHECK(e.find("budget.evaluatons") != std::string::npos);
  CHECK(e.find("unknown key") != std::string::npos);
  e = error_of("[search]\nbackend = \"cpu\"\n");
  CHECK(e.find("search.problem") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\noperator = \"null\"\n");
  CHECK(e.find("null operator") != std::string::npos);
  e = error_of("[search]\nproblem = \"gelu\"\nbackend = \"cuda\"\n[eval]\narch = \"compute_90\"\n");
  CHECK(e.find("eval.arch") != std::string::npos);
  e = error_of("[search\n");
  CHECK(e.find("TOML syntax error") != std::string::npos);
}

TEST_CASE("a CUDA search config: backend, architecture and warm start", "[config]") {
  const auto path = fs::temp_directory_path() / ("kevolve-cfg-cuda-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path)
      << "[search]\nproblem = \"gelu\"\nbackend = \"cuda\"\nwarm_start = false\n[eval]\narch = \"sm_90\"\n";
  auto c = load_run_config(path.string());
  fs::remove(path);
  REQUIRE(c);
  CHECK(c->backend == "cuda");
  CHECK(c->eval.arch == "sm_90");
  CHECK_FALSE(c->warm_start);
}

TEST_CASE("the shipped LLM example config loads", "[config]") {
  auto c = load_run_config(std::string(KEVOLVE_SOURCE_DIR) + "/configs/llm-example.toml");
  REQUIRE(c);
  CHECK(c->op == "llm");
  CHECK(c->llm.provider == "openai");
  CHECK(c->llm.token_budget == 2000000);
  CHECK(c->hardware == "auto");
  // Every [llm] key the operator reads is in the example, with its documented value.
  CHECK(c->llm.best_k == 3);
  CHECK(c->llm.breaker == 4);
  CHECK(c->llm.max_tokens_limit == 16384);
  CHECK(c->llm.token_parameter == "max_tokens");
  CHECK(c->llm.max_backoff_s == 300);
  CHECK(c->llm.journal == "kevolve-store.llm-requests.jsonl");
  CHECK(c->llm.search == c->search_id);  // journal lines name their search
}

TEST_CASE("[llm] best_k: how many best kernels a prompt shows, 1 to 20", "[config]") {
  const auto path = std::filesystem::temp_directory_path() / ("kevolve-bestk-" + std::to_string(getpid()) + ".toml");
  auto load = [&](const std::string& k) {
    std::ofstream(path) << "[search]\nproblem = \"gelu\"\noperator = \"llm\"\n[llm]\nendpoint = "
                           "\"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n"
                        << k;
    return load_run_config(path.string());
  };
  auto defaulted = load("");
  REQUIRE(defaulted);
  CHECK(defaulted->llm.best_k == 3);
  auto five = load("best_k = 5\n");
  REQUIRE(five);
  CHECK(five->llm.best_k == 5);
  auto zero = load("best_k = 0\n");
  REQUIRE_FALSE(zero);
  CHECK(zero.error().find("llm.best_k") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("the cluster section: listen address, secret variable, TLS only with a CA", "[config]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("kevolve-cluster-cfg-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);
  auto load = [&](const std::string& cluster) {
    std::ofstream(dir + "/c.toml") << "[search]\nproblem = \"gelu\"\n[cluster]\n" << cluster;
    return load_run_config(dir + "/c.toml");
  };
  // Another machine's address needs TLS, or an explicit opt-out.
  auto plain = load("listen = \"10.0.0.5:7411\"\n");
  REQUIRE_FALSE(plain);
  CHECK(plain.error().find("cluster.listen") != std::string::npos);
  CHECK(plain.error().find("allow_plain_tcp") != std::string::npos);
  auto ok = load(
      "listen = \"10.0.0.5:7411\"\nevaluator_key_env = \"MY_EVAL_KEY\"\nconsole_key_env = \"MY_CONSOLE_KEY\"\n"
      "eval_timeout = 60\nallow_plain_tcp = true\nsubmit_dirs = [\"/srv/searches\", \"more\"]\n");
  REQUIRE(ok);
  CHECK(ok->cluster.listen == "10.0.0.5:7411");
  CHECK(ok->cluster.evaluator_key_env == "MY_EVAL_KEY");
  CHECK(ok->cluster.console_key_env == "MY_CONSOLE_KEY");
  CHECK(ok->cluster.submit_dirs == std::vector<std::string>{"/srv/searches", dir + "/more"});
  // One secret for every role is refused, with what replaces it.
  auto one = load("secret_env = \"MY_SECRET\"\n");
  REQUIRE_FALSE(one);
  CHECK(one.error().find("cluster.secret_env") != std::string::npos);
  CHECK(one.error().find("evaluator_key_env and console_key_env") != std::string::npos);
  // By default a console submits only configs of the node's own folder.
  auto plain_local = load("listen = \"127.0.0.1:7411\"\n");
  REQUIRE(plain_local);
  CHECK(plain_local->cluster.submit_dirs == std::vector<std::string>{dir});
  CHECK(ok->cluster.eval_timeout_s == 60);
  auto bad = load("listen = \"7411\"\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("cluster.listen") != std::string::npos);
  auto no_ca = load("tls_cert = \"a.pem\"\ntls_key = \"a.key\"\n");
  REQUIRE_FALSE(no_ca);
  CHECK(no_ca.error().find("cluster.tls_ca") != std::string::npos);
  CHECK(no_ca.error().find("not authenticated") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("[llm]: token parameter and temperature per model, limits, breaker, journal", "[config][llm]") {
  const auto path = fs::temp_directory_path() / ("kevolve-cfg-llm-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path)
      << "[search]\nproblem = \"gelu\"\noperator = \"llm\"\n[store]\npath = \"/tmp/kv-store\"\n[llm]\n"
         "endpoint = \"http://127.0.0.1:1/v1/chat/completions\"\nmodel = \"gpt-4.1\"\nconcurrency = 3\n"
         "requests_per_minute = 50\nmax_tokens_limit = 20000\nbreaker = 6\nmax_backoff = 90\n"
         "models = [{ name = \"gpt-4.1\", weight = 1.0 }, { name = \"o3\", weight = 1.0, token_parameter = "
         "\"max_completion_tokens\", send_temperature = false }]\n";
  auto c = load_run_config(path.string());
  fs::remove(path);
  REQUIRE(c);
  CHECK(c->llm.concurrency == 3);
  CHECK(c->llm.requests_per_minute == 50);
  CHECK(c->llm.max_tokens_limit == 20000);
  CHECK(c->llm.breaker == 6);
  CHECK(c->llm.max_backoff_s == 90);
  CHECK(c->llm.journal == "/tmp/kv-store.llm-requests.jsonl");
  REQUIRE(c->llm.model_options.count("o3"));
  CHECK(c->llm.options_for("o3").token_parameter == "max_completion_tokens");
  CHECK(c->llm.options_for("o3").send_temperature == 0);
  CHECK(c->llm.options_for("gpt-4.1").token_parameter == "max_tokens");
  CHECK(c->llm.options_for("gpt-4.1").send_temperature == 1);
  auto e = error_of(
      "[search]\nproblem = \"gelu\"\noperator = \"llm\"\n[llm]\nendpoint = \"http://x/\"\nmodel = \"m\"\n"
      "token_parameter = \"max_output\"\n");
  CHECK(e.find("llm.token_parameter") != std::string::npos);
}
