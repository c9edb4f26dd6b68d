// The universal operator through the whole engine: a real HTTP server on 127.0.0.1 plays the LLM, the
// CPU backend compiles, verifies and times what it writes, the prompts carry the runtime context, and
// prompts and replies are stored with their nodes. Also: `kevolve run` refuses an LLM config that
// cannot work (no key, nobody listening) at start.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_support/skip.hpp"
#include "tests/test_support/shell.hpp"
#include "../runtime/llm/fake_llm_server.hpp"
#include "actors/protocol/run_search.hpp"
#include "knowledge/knowledge_base.hpp"
#include "runtime/operators/llm_operator.hpp"
#include "runtime/config/problem_loader.hpp"
#include "storage/store.hpp"

using namespace kevolve;
namespace fs = std::filesystem;
using Server = kevolve::test::FakeLlmServer;

namespace {

std::string softmax_kernel(int variant) {
  return "```cpp\n// variant " + std::to_string(variant) +
         "\n#include \"kevolve_kernel.h\"\n#include <algorithm>\n#include <cmath>\n"
         "extern \"C\" int kevolve_kernel(const kv_args* a) {\n"
         "  const float* x = static_cast<const float*>(a->inputs[0].data);\n"
         "  float* y = static_cast<float*>(a->outputs[0].data);\n"
         "  const int64_t R = a->inputs[0].shape[0], C = a->inputs[0].shape[1];\n"
         "  for (int64_t r = 0; r < R; ++r) {\n"
         "    float m = x[r * C];\n"
         "    for (int64_t c = 1; c < C; ++c) m = std::max(m, x[r * C + c]);\n"
         "    double s = 0;\n"
         "    for (int64_t c = 0; c < C; ++c) s += std::exp(double(x[r * C + c]) - m);\n"
         "    for (int64_t c = 0; c < C; ++c) y[r * C + c] = float(std::exp(double(x[r * C + c]) - m) / s);\n"
         "  }\n  return 0;\n}\n```\nA plain two-pass softmax.";
}

// A one-at-a-time LLM search on a fresh store in `dir`, with quick timing (tests check verdicts, not speed).
RunConfig llm_search_config(const ProblemSpec& spec, const std::string& dir, const std::string& id, int64_t budget) {
  fs::remove_all(dir);
  RunConfig c;
  c.problem = spec.file;
  c.search_id = id;
  c.op = "llm";
  c.max_in_flight = 1;
  c.budget.max_evaluations = budget;
  c.store = dir;
  c.checkpoint_seconds = 0;
  c.eval.min_time_s = 0.02;
  c.eval.min_reps = 5;
  return c;
}

int run_cli(const std::string& config, std::string& out) {
  auto r = test::shell(std::string(KEVOLVE_BIN_DIR) + "/kevolve run " + config + " 2>&1");
  out += r.out;
  return r.code;
}

}  // namespace

TEST_CASE("an LLM-driven search: prompts with context, replies turned into evaluated kernels", "[llm][engine]") {
  Server server;
  server.push({200, Server::openai_body("Sorry, I would rather explain softmax in prose.")});  // unusable: retried
  for (int v = 1; v <= 3; ++v) server.push({200, Server::openai_body(softmax_kernel(v))});
  const std::string root = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  lc.retries = 0;
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto prompts = PromptTemplates::load(root);
  REQUIRE(prompts);
  auto kb = KnowledgeBase::load(root);
  REQUIRE(kb);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  auto op = std::make_shared<LlmOperator>(LlmOperatorSetup{*client, *prompts, *spec, "torch.softmax(x, -1)", "x86-avx2",
                                                           "vector_width_bytes = 32", *kb, 1});

  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-search-" + std::to_string(getpid()))).string();
  auto s = run_search(llm_search_config(*spec, dir, "llm", 3), *spec, op, {});
  REQUIRE(s);
  CHECK(s->evaluated == 3);
  CHECK(s->correct == 3);

  auto store = Store::open(dir, true);
  REQUIRE(store);
  auto p1 = (*store)->artifact("llm", 1, "prompt");
  REQUIRE(p1);
  CHECK(p1->find("# Problem: softmax_small") != std::string::npos);
  CHECK(p1->find("Write a first, simple and correct kernel") != std::string::npos);
  CHECK(p1->find("vector_width_bytes = 32") != std::string::npos);                   // the target's constraints
  CHECK(p1->find("could not be used") != std::string::npos);                         // the retry said why
  CHECK((*store)->artifact("llm", 1, "reply")->find("prose") != std::string::npos);  // transcript kept
  auto p2 = (*store)->artifact("llm", 2, "prompt");
  REQUIRE(p2);
  CHECK(p2->find("Make the kernel below faster") != std::string::npos);
  CHECK(p2->find("// variant 1") != std::string::npos);                 // the parent's source
  CHECK(p2->find("What the evaluator reported") != std::string::npos);  // its report
  CHECK(p2->find("Diagnosis and directives") != std::string::npos);
  CHECK(p2->find("Notes from the knowledge base") != std::string::npos);
  CHECK(server.requests().size() == 4);
  CHECK((*client)->usage().requests == 4);
  store->reset();

  // Replay: the same kernels again through `kevolve run`, without any endpoint.
  const std::string cfg = dir + "-replay.toml";
  std::ofstream(cfg) << "[search]\nproblem = \"" << spec->file << "\"\nid = \"again\"\noperator = \"replay\"\n"
                     << "replay_store = \"" << dir << "\"\nreplay_search = \"llm\"\nmax_in_flight = 1\nretime_top = 1\n"
                     << "retime_min_time = 0.05\n[budget]\nevaluations = 3\n[store]\npath = \"" << dir << "-replay\"\n"
                     << "checkpoint_seconds = 0\n[eval]\nmin_time = 0.02\nmin_reps = 5\n";
  std::string out;
  CHECK(run_cli(cfg + " --out " + dir + "-replay-out", out) == 0);
  INFO(out);
  CHECK(server.requests().size() == 4);  // nothing new asked
  CHECK(out.find("kevolve: re-timed node ") != std::string::npos);  // the report's re-timing, shown as it ends
  CHECK(out.find(" (1 of 1) in ") != std::string::npos);
  auto original = Store::open(dir, true);
  auto replayed = Store::open(dir + "-replay", true);
  REQUIRE(original);
  REQUIRE(replayed);
  CHECK((*replayed)->nodes("again").size() == 3);
  for (uint64_t id = 1; id <= 3; ++id) {
    CHECK(*(*replayed)->artifact("again", id, "source") == *(*original)->artifact("llm", id, "source"));
    CHECK(*(*replayed)->artifact("again", id, "prompt") == *(*original)->artifact("llm", id, "prompt"));
  }
  fs::remove_all(dir);
  fs::remove_all(dir + "-replay");
  fs::remove_all(dir + "-replay-out");
  fs::remove(cfg);
}

TEST_CASE("a reply that is a diff against the parent is applied to it, and one that does not apply is asked again",
          "[llm][engine]") {
  Server server;
  server.push({200, Server::openai_body(softmax_kernel(1))});
  // The mutation of node 1: first a diff whose context is not in node 1, then one that applies.
  server.push({200, Server::openai_body(
                        "```diff\n@@ -10,3 +10,3 @@\n-    float m = -INFINITY;\n+    float m = x[r * C];\n```\n")});
  server.push({200, Server::openai_body(
                        "Only the comment changes.\n```diff\n--- a/kernel.cpp\n+++ b/kernel.cpp\n"
                        "@@ -1,3 +1,3 @@\n-// variant 1\n+// variant 1, patched\n #include \"kevolve_kernel.h\"\n"
                        " #include <algorithm>\n```\n")});
  const std::string root = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  lc.retries = 0;
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  auto op = std::make_shared<LlmOperator>(LlmOperatorSetup{*client, *PromptTemplates::load(root), *spec,
                                                           "torch.softmax(x, -1)", "x86-avx2", "", nullptr, 1});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-diff-" + std::to_string(getpid()))).string();
  auto s = run_search(llm_search_config(*spec, dir, "diff", 2), *spec, op, {});
  REQUIRE(s);
  CHECK(s->evaluated == 2);
  CHECK(s->correct == 2);
  CHECK(server.requests().size() == 3);

  auto store = Store::open(dir, true);
  REQUIRE(store);
  auto parent = (*store)->artifact("diff", 1, "source");
  auto child = (*store)->artifact("diff", 2, "source");
  REQUIRE(parent);
  REQUIRE(child);
  std::string want = *parent;
  want.replace(want.find("// variant 1"), 12, "// variant 1, patched");
  CHECK(*child == want);  // the patched parent, evaluated as a kernel
  auto prompt = (*store)->artifact("diff", 2, "prompt");
  REQUIRE(prompt);
  CHECK(prompt->find("in one ```diff block") != std::string::npos);  // the prompt offers diffs
  const std::string why = "your diff could not be applied: hunk 1: line 'float m = -INFINITY;' not found in the parent";
  CHECK(prompt->find("could not be used: " + why) != std::string::npos);  // the re-ask said why
  auto reply = (*store)->artifact("diff", 2, "reply");
  REQUIRE(reply);
  CHECK(reply->find(why) != std::string::npos);                       // the transcript records it
  CHECK(reply->find("+// variant 1, patched") != std::string::npos);  // the reply stays the raw diff
  store->reset();
  fs::remove_all(dir);
}

TEST_CASE("kevolve run refuses an LLM config without its key or endpoint, at start", "[llm][cli]") {
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-cfg-" + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  const std::string cfg = dir + "/llm.toml";
  unsetenv("KEVOLVE_TEST_ABSENT_KEY");
  std::ofstream(cfg)
      << "[search]\nproblem = \"gelu\"\noperator = \"llm\"\n[llm]\nprovider = \"anthropic\"\n"
         "endpoint = \"http://127.0.0.1:1/v1/messages\"\nmodel = \"m\"\napi_key_env = \"KEVOLVE_TEST_ABSENT_KEY\"\n"
         "[store]\npath = \""
      << dir << "/store\"\n";
  std::string out;
  CHECK(run_cli(cfg, out) == 2);
  CHECK(out.find("KEVOLVE_TEST_ABSENT_KEY is not set") != std::string::npos);

  std::ofstream(cfg) << "[search]\nproblem = \"gelu\"\noperator = \"llm\"\n[llm]\nprovider = \"openai\"\n"
                        "endpoint = \"http://127.0.0.1:1/v1/chat/completions\"\nmodel = \"m\"\n[store]\npath = \""
                     << dir << "/store\"\n";
  out.clear();
  CHECK(run_cli(cfg, out) == 2);
  CHECK(out.find("cannot connect to 127.0.0.1:1") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a spent LLM budget stops the search cleanly with that reason", "[llm][engine]") {
  Server server;
  for (int v = 1; v <= 5; ++v) server.push({200, Server::openai_body(softmax_kernel(v), 11, 7)});
  const std::string root = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  lc.token_budget = 36;  // two replies of 18 tokens
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  auto op = std::make_shared<LlmOperator>(LlmOperatorSetup{*client, *PromptTemplates::load(root), *spec,
                                                           "torch.softmax(x, -1)", "x86-avx2", "", nullptr, 1});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-budget-" + std::to_string(getpid()))).string();
  auto s = run_search(llm_search_config(*spec, dir, "budget", 10), *spec, op, {});
  REQUIRE(s);
  CHECK(s->finished);
  CHECK(s->stop_reason.find("token budget") != std::string::npos);
  CHECK(s->evaluated == 2);
  CHECK(server.requests().size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("on a KernelBench-format problem the LLM writes ModelNew files, evaluated through the Python interpreter",
          "[llm][python]") {
  if (test::shell("/usr/bin/python3 -c 'import torch' 2>/dev/null").code != 0 &&
      test::shell("python3 -c 'import torch' 2>/dev/null").code != 0) {
    kevolve::test::say_skipped("no python3 with torch here");
    return;
  }
  Server server;
  // The seed: ModelNew with its own C++ kernel (load_inline); then a reply without code (asked again), then a
  // ModelNew that only calls PyTorch (evaluated, and labelled a framework rewrite by the evaluator).
  server.push(
      {200,
       Server::openai_body(
           "```python\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
           "_SRC = r'''\n#include <torch/extension.h>\n"
           "torch::Tensor relu_fwd(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
           "  const float* a = x.data_ptr<float>();\n  float* b = y.data_ptr<float>();\n"
           "  for (int64_t i = 0, n = x.numel(); i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;\n  return y;\n}\n'''\n"
           "_ext = load_inline(name='kevolve_llm_test_relu', cpp_sources=_SRC, functions=['relu_fwd'], "
           "verbose=False)\n\n\n"
           "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
           "    def forward(self, x):\n        return _ext.relu_fwd(x.contiguous())\n```\nA scalar C++ loop.")});
  server.push({200, Server::openai_body("ReLU keeps the positive part; I would use an elementwise kernel.")});
  server.push(
      {200, Server::openai_body("```python\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                                "    def __init__(self):\n        super().__init__()\n\n"
                                "    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n```\n")});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-kb-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string problem = std::string(KEVOLVE_SOURCE_DIR) + "/problems/kernelbench-small/1_relu.py";
  auto config = [&](const std::string& language) {
    std::ofstream(dir + "/run.toml")
        << "[search]\nproblem = \"" << problem << "\"\nid = \"kb-llm\"\nbackend = \"cpu\"\noperator = \"llm\"\n"
        << "max_in_flight = 1\nretime_top = 0\n[budget]\nevaluations = 2\n[llm]\nprovider = \"openai\"\n"
        << "endpoint = \"" << server.url("/v1/chat/completions") << "\"\nmodel = \"fixture-model\"\nretries = 0\n"
        << language << "[store]\npath = \"" << dir << "/store\"\ncheckpoint_seconds = 0\n"
        << "[eval]\nmin_time = 0.02\nmin_reps = 5\nthreads = 2\n";
    return dir + "/run.toml";
  };
  std::string out;
  // Triton and CUDA kernels need the GPU: refused at start on the CPU.
  CHECK(run_cli(config("kernel_language = \"triton\"\n"), out) == 2);
  CHECK(out.find("llm.kernel_language: 'triton' needs the GPU") != std::string::npos);
  out.clear();
  const int rc = run_cli(config("") + " --out " + dir + "/out", out);
  INFO(out);
  REQUIRE(rc == 0);
  auto store = Store::open(dir + "/store", true);
  REQUIRE(store);
  const auto nodes = (*store)->nodes("kb-llm");
  REQUIRE(nodes.size() == 2);
  for (auto& n : nodes) {
    INFO("node " << n.id << ": " << status_name(n.status) << " [" << n.reason << "] " << n.message);
    CHECK(n.correct());
  }
  auto prompt = (*store)->artifact("kb-llm", 1, "prompt");
  REQUIRE(prompt);
  CHECK(prompt->find("class ModelNew(nn.Module)") != std::string::npos);  // the system prompt: what to write
  CHECK(prompt->find("C++ compiled with `torch.utils.cpp_extension.load_inline`") != std::string::npos);  // CPU: cpp
  CHECK(prompt->find("class Model(nn.Module):") != std::string::npos);  // the problem file itself
  CHECK(prompt->find("Write a first, simple and correct ModelNew") != std::string::npos);
  CHECK(prompt->find("Inputs (in order)") == std::string::npos);  // no core-problem tensor list
  CHECK((*store)->artifact("kb-llm", 1, "source")->find("load_inline") != std::string::npos);
  auto second = (*store)->artifact("kb-llm", 2, "prompt");
  REQUIRE(second);
  CHECK(second->find("```python\nimport torch") != std::string::npos);  // the parent, fenced as Python
  CHECK(second->find("could not be used") != std::string::npos);        // the prose reply was asked again
  CHECK(second->find("one ```python block") != std::string::npos);
  CHECK(fs::exists(dir + "/out/best/model_new.py"));
  CHECK(server.requests().size() == 3);
  fs::remove_all(dir);
}

TEST_CASE("a permanent provider error stops the search at once, with the provider's message", "[llm][engine][errors]") {
  Server server;
  server.generate([](int) {
    return Server::Reply{401, Server::openai_error("Incorrect API key provided: sk-proj-****1234.",
                                                   "invalid_request_error", "invalid_api_key")};
  });
  const std::string root = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  auto op = std::make_shared<LlmOperator>(LlmOperatorSetup{*client, *PromptTemplates::load(root), *spec,
                                                           "torch.softmax(x, -1)", "x86-avx2", "", nullptr, 2});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-401-" + std::to_string(getpid()))).string();
  auto cfg = llm_search_config(*spec, dir, "denied", 20);
  cfg.max_in_flight = 4;
  auto s = run_search(cfg, *spec, op, {});
  REQUIRE(s);
  CHECK(s->finished);
  CHECK(s->evaluated == 0);
  CHECK(s->stop_reason.find("HTTP 401") != std::string::npos);
  CHECK(s->stop_reason.find("Incorrect API key provided") != std::string::npos);
  CHECK(server.requests().size() <= 2);  // at most the requests already in flight (concurrency 2), not 201
  fs::remove_all(dir);
}

TEST_CASE("tool-call replies: asked again once each, then the circuit breaker stops the search",
          "[llm][engine][errors]") {
  Server server;
  server.generate([](int) { return Server::Reply{200, Server::openai_tool_call(50, 10)}; });
  const std::string root = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  lc.breaker = 4;
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  auto op = std::make_shared<LlmOperator>(LlmOperatorSetup{*client, *PromptTemplates::load(root), *spec,
                                                           "torch.softmax(x, -1)", "x86-avx2", "", nullptr, 1});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-tool-" + std::to_string(getpid()))).string();
  auto s = run_search(llm_search_config(*spec, dir, "tools", 20), *spec, op, {});
  REQUIRE(s);
  CHECK(s->evaluated == 0);
  CHECK(s->stop_reason.find("circuit breaker") != std::string::npos);
  CHECK(s->stop_reason.find("it called a tool") != std::string::npos);
  CHECK(server.requests().size() == 8);  // 4 proposals x 2 replies, not 603
  CHECK((*client)->usage().input_tokens == 8 * 50);
  fs::remove_all(dir);
}

TEST_CASE("kevolve run: a quota error ends the run with a non-zero status, the message on stderr and in report.json",
          "[llm][cli][errors]") {
  Server server;
  server.generate([](int) {
    return Server::Reply{429, Server::openai_error("You exceeded your current quota, please check your plan and "
                                                   "billing details.",
                                                   "insufficient_quota", "insufficient_quota")};
  });
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-quota-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir + "/run.toml")
      << "[search]\nproblem = \"" << KEVOLVE_SOURCE_DIR << "/tests/fixtures/problems/softmax_small/problem.toml\"\n"
      << "id = \"quota\"\noperator = \"llm\"\nmax_in_flight = 2\nretime_top = 0\n[budget]\nevaluations = 10\n"
      << "[llm]\nprovider = \"openai\"\nendpoint = \"" << server.url("/v1/chat/completions")
      << "\"\nmodel = \"fixture-model\"\n[store]\npath = \"" << dir << "/store\"\ncheckpoint_seconds = 0\n";
  std::string out;
  const int rc = run_cli(dir + "/run.toml --out " + dir + "/out", out);
  INFO(out);
  CHECK(rc != 0);
  CHECK(out.find("the search stopped on an LLM error") != std::string::npos);
  CHECK(out.find("You exceeded your current quota") != std::string::npos);
  CHECK(server.requests().size() <= 2);
  std::ifstream report(dir + "/out/report.json");
  std::stringstream text;
  text << report.rdbuf();
  CHECK(text.str().find("You exceeded your current quota") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "kevolve run: a model that only repeats the search's kernel ends the search with status 0 and says so and "
    "kevolve inspect --journal shows every request and reply",
    "[llm][cli]") {
  Server server;
  server.generate([](int) { return Server::Reply{200, Server::openai_full(softmax_kernel(1), "stop", 200, 90)}; });
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-dup-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir + "/run.toml")
      << "[search]\nproblem = \"" << KEVOLVE_SOURCE_DIR << "/tests/fixtures/problems/softmax_small/problem.toml\"\n"
      << "id = \"dup\"\noperator = \"llm\"\nmax_in_flight = 1\nretime_top = 0\n[budget]\nevaluations = 10\n"
      << "[eval]\nmin_time = 0.02\nmin_reps = 5\n"
      << "[llm]\nprovider = \"openai\"\nendpoint = \"" << server.url("/v1/chat/completions")
      << "\"\nmodel = \"fixture-model\"\nbreaker = 2\n[store]\npath = \"" << dir
      << "/store\"\ncheckpoint_seconds = 0\n";
  std::string out;
  const int rc = run_cli(dir + "/run.toml --out " + dir + "/out", out);
  INFO(out);
  CHECK(rc == 0);  // out of new ideas is how a search ends, not a provider's failure
  CHECK(out.find("kevolve: finished: the model proposed only kernels this search has already evaluated, 2 "
                 "proposals in a row") != std::string::npos);
  CHECK(out.find("run out of new ideas") != std::string::npos);
  CHECK(out.find("stopped on an LLM error") == std::string::npos);
  CHECK(out.find("circuit breaker") == std::string::npos);
  CHECK(server.requests().size() == 1 + 2 * 2);  // the seed, then 2 proposals x 2 replies
  std::ifstream report(dir + "/out/report.json");
  std::stringstream text;
  text << report.rdbuf();
  CHECK(text.str().find("run out of new ideas") != std::string::npos);

  auto journal = test::shell(std::string(KEVOLVE_BIN_DIR) + "/kevolve inspect " + dir + "/run.toml --journal 2>&1");
  INFO(journal.out);
  CHECK(journal.code == 0);
  CHECK(journal.out.find("LLM journal of dup (" + dir +
                         "/store.llm-requests.jsonl): 5 requests, 5 replies (1 used), "
                         "1000 input + 450 output + 0 estimated tokens") != std::string::npos);
  CHECK(journal.out.find("  used: llm fixture-model (seed)") != std::string::npos);
  CHECK(journal.out.find("  not used: its kernel is identical to one this search has already evaluated") !=
        std::string::npos);
  CHECK(journal.out.find("    A plain two-pass softmax.") != std::string::npos);  // the reply text
  fs::remove_all(dir);
}

TEST_CASE("kevolve run: the progress line shows the provider's back-off with its end while a retry-after is waited out",
          "[llm][cli][progress]") {
  Server server;
  server.push({429, "{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\"}}",
               {{"retry-after", "8"}}});
  server.generate([](int n) { return Server::Reply{200, Server::openai_full(softmax_kernel(n), "stop", 200, 90)}; });
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-wait-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir + "/run.toml")
      << "[search]\nproblem = \"" << KEVOLVE_SOURCE_DIR << "/tests/fixtures/problems/softmax_small/problem.toml\"\n"
      << "id = \"wait\"\noperator = \"llm\"\nmax_in_flight = 1\nretime_top = 0\n[budget]\nevaluations = 1\nseconds = 600\n"
      << "[eval]\nmin_time = 0.02\nmin_reps = 5\n"
      << "[llm]\nprovider = \"openai\"\nendpoint = \"" << server.url("/v1/chat/completions")
      << "\"\nmodel = \"fixture-model\"\ncost_per_mtok_in = 2.0\ncost_per_mtok_out = 8.0\n[store]\npath = \"" << dir
      << "/store\"\ncheckpoint_seconds = 0\n";
  std::string out;
  const int rc = run_cli(dir + "/run.toml --out " + dir + "/out", out);
  INFO(out);
  CHECK(rc == 0);
  // Printed every 5 s when stderr is not a terminal: the 8 s wait is on at least one line, with its cause.
  const size_t wait = out.find("provider back-off until ");
  REQUIRE(wait != std::string::npos);
  const std::string line = out.substr(out.rfind('\n', wait) + 1, out.find('\n', wait) - out.rfind('\n', wait) - 1);
  CHECK(line.find("LLM 0 in flight, 1 waiting") != std::string::npos);
  CHECK(line.find("429") != std::string::npos);
  CHECK(line.find(" UTC (") != std::string::npos);
  CHECK(line.find(" | about 10 min left | ") != std::string::npos);  // nothing evaluated yet: the time budget's end
  // The last line has the tokens and the cost spent: 1 request of 200 + 90 tokens at 2 and 8 per million.
  CHECK(out.find("290 tokens, cost 0.00112") != std::string::npos);
  CHECK(server.requests().size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("LLM lanes: every lane stays busy and one slow reply holds back no other child", "[llm][engine][lanes]") {
  Server server;
  // Every reply a distinct kernel after 200 ms, but the 4th request's after 4 s. With one request per proposal
  // the other lanes go on meanwhile; a batch would wait for its slowest reply.
  server.generate([](int n) {
    return Server::Reply{200, Server::openai_full(softmax_kernel(n), "stop", 100, 50), {}, n == 3 ? 4000 : 200};
  });
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "fixture-model";
  lc.retries = 0;
  lc.concurrency = 8;
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  auto prompts = PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(prompts);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  auto op = std::make_shared<LlmOperator>(
      LlmOperatorSetup{*client, *prompts, *spec, "torch.softmax(x, -1)", "x86-avx2", "", nullptr, 8});
  const std::string dir = (fs::temp_directory_path() / ("kevolve-llm-lanes-" + std::to_string(getpid()))).string();
  RunConfig c = llm_search_config(*spec, dir, "lanes", 60);
  c.backend = "null";
  c.max_in_flight = 16;
  c.strategy.name = "evolutionary";
  c.strategy.islands = 2;
  c.strategy.population = 8;
  auto s = run_search(c, *spec, op, {});
  REQUIRE(s);
  CHECK(s->evaluated == 60);
  const auto req = server.requests();
  REQUIRE(req.size() >= 60);
  // Requests that started while the slow one was out: the other 7 lanes kept asking.
  const auto slow_start = req[3].at, slow_end = req[3].at + std::chrono::milliseconds(4000);
  int during = 0;
  for (auto& r : req) during += r.at > slow_start && r.at < slow_end;
  INFO("requests started during the slow reply: " << during);
  CHECK(during >= 24);  // a batch would allow at most the rest of its own 16 proposals
  // At some moment 8 requests were out at once (each is out 200 ms from its arrival, the slow one 4 s).
  int peak = 0;
  for (size_t i = 0; i < req.size(); ++i) {
    int out = 0;
    for (size_t j = 0; j < req.size(); ++j) {
      const auto len = std::chrono::milliseconds(j == 3 ? 4000 : 200);
      out += req[j].at <= req[i].at && req[i].at < req[j].at + len;
    }
    peak = std::max(peak, out);
  }
  CHECK(peak == 8);
  fs::remove_all(dir);
}
