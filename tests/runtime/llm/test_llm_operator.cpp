// The LLM operator against a real HTTP server on 127.0.0.1 playing the provider: replies cut at the token
// limit are never evaluated, tool calls and prose are asked again once and then trip the circuit breaker,
// a permanent error stops it after one request, every token is accounted for under a realistic mix of
// failures (the soak), and the prompts carry what a kernel engineer needs, each fact true (from the evaluation
// it describes) or absent.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "fake_llm_server.hpp"
#include "runtime/config/problem_loader.hpp"
#include "runtime/llm/journal.hpp"
#include "runtime/operators/llm_operator.hpp"

using namespace kevolve;
using Server = kevolve::test::FakeLlmServer;

namespace {

std::string kernel(int variant) {
  return "#include \"kevolve_kernel.h\"\n// variant " + std::to_string(variant) +
         "\nextern \"C\" int kevolve_kernel(const kv_args* a) {\n  (void)a;\n  return 0;\n}\n";
}
std::string fenced(int variant) { return "```cpp\n" + kernel(variant) + "```\nA plain kernel."; }

struct Fixture {
  Server server;
  std::shared_ptr<llm::LlmClient> client;
  std::shared_ptr<LlmOperator> op;
  explicit Fixture(int breaker = 4, const std::string& problem = "/tests/fixtures/problems/softmax_small/problem.toml",
                   int retries = 0, const std::string& journal = "", double backoff_s = 0.005) {
    llm::LlmConfig c;
    c.journal = journal;
    c.search = "s1";
    c.endpoint = server.url("/v1/chat/completions");
    c.model = "fixture-model";
    c.retries = retries;
    c.backoff_s = backoff_s;
    c.max_tokens = 4096;
    c.breaker = breaker;
    c.concurrency = 4;
    auto made = llm::LlmClient::create(c);
    REQUIRE(made);
    client = *made;
    auto prompts = PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
    REQUIRE(prompts);
    auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + problem);
    REQUIRE(spec);
    LlmOperatorSetup s{client, *prompts, *spec, "torch.softmax(x, -1)", "x86-avx2", "cores_hint = 16", nullptr, 4};
    s.eval_threads = 2;
    op = std::make_shared<LlmOperator>(s);
  }
  Expected<Offspring> seed() {
    SearchGraph g;
    Rng rng(1);
    return op->make(Proposal{Operation::seed, {}, 0}, g, rng, OperatorContext{});
  }
};

}  // namespace

TEST_CASE("a reply cut at the token limit is never evaluated: asked again with a larger limit", "[llm][operator]") {
  Fixture f;
  // Cut mid-way through the new kernel, after quoting the old one in a closed block that defines the entry point.
  f.server.push({200, Server::openai_full("The current kernel is:\n" + fenced(1) + "\nThe faster one:\n```cpp\n" +
                                              "#include \"kevolve_kernel.h\"\nextern \"C\" int kevolve_kernel(const "
                                              "kv_args* a) {\n  for (int i = 0;",
                                          "length", 900, 4096)});
  f.server.push({200, Server::openai_full(fenced(2), "stop", 950, 300)});
  auto o = f.seed();
  REQUIRE(o);
  CHECK(o->candidate.source == kernel(2));
  const auto req = f.server.requests();
  REQUIRE(req.size() == 2);
  CHECK(req[0].body.find("\"max_tokens\":4096") != std::string::npos);
  CHECK(req[1].body.find("\"max_tokens\":8192") != std::string::npos);  // the limit raised, within its bound
  CHECK(req[1].body.find("cut at the output limit of 4096 tokens") != std::string::npos);
  CHECK(o->reply.find("finish length") != std::string::npos);  // both replies kept, with their finish reasons
  CHECK(f.client->usage().output_tokens == 4096 + 300);
}

TEST_CASE("a token limit raised by a cut reply sticks for the next proposals within max_tokens_limit",
          "[llm][operator]") {
  Fixture f;
  f.server.push({200, Server::openai_full("```cpp\n#include \"kevolve_kernel.h\"\nint x", "length", 900, 4096)});
  f.server.push({200, Server::openai_full(fenced(2), "stop", 950, 300)});
  f.server.push({200, Server::openai_full("```cpp\n#include \"kevolve_kernel.h\"\nint y", "length", 900, 8192)});
  f.server.push({200, Server::openai_full("```cpp\n#include \"kevolve_kernel.h\"\nint z", "length", 900, 16384)});
  f.server.push({200, Server::openai_full(fenced(3), "stop", 950, 300)});
  f.server.push({200, Server::openai_full(fenced(4), "stop", 950, 300)});
  REQUIRE(f.seed());
  CHECK_FALSE(f.seed());  // cut twice: 8192, then 16384, the bound (4 x max_tokens)
  REQUIRE(f.seed());
  REQUIRE(f.seed());
  const auto req = f.server.requests();
  REQUIRE(req.size() == 6);
  CHECK(req[1].body.find("\"max_tokens\":8192") != std::string::npos);
  CHECK(req[2].body.find("\"max_tokens\":8192") != std::string::npos);  // the next proposal starts where it stopped
  CHECK(req[3].body.find("\"max_tokens\":16384") != std::string::npos);
  CHECK(req[4].body.find("\"max_tokens\":16384") != std::string::npos);
  CHECK(req[5].body.find("\"max_tokens\":16384") != std::string::npos);  // never above the limit
}

TEST_CASE("proposals without a usable reply are spaced by a growing back-off instead of going out back to back",
          "[llm][operator]") {
  Fixture f(4, "/tests/fixtures/problems/softmax_small/problem.toml", 0, "", 0.2);
  f.server.generate([](int) { return Server::Reply{200, Server::openai_full("No code today.", "stop", 100, 20)}; });
  for (int i = 0; i < 10 && f.op->exhausted().empty(); ++i) CHECK_FALSE(f.seed());
  const auto req = f.server.requests();
  REQUIRE(req.size() == 8);  // 4 proposals x 2 replies, then the breaker
  using std::chrono::duration;
  for (size_t p = 1; p < 4; ++p) {  // proposal p's first request waited 0.2 x 2^(p-1) s after the last failure
    const double gap = duration<double>(req[2 * p].at - req[2 * p - 1].at).count();
    CHECK(gap >= 0.2 * (1 << (p - 1)));
  }
  CHECK(f.op->fatal().find("circuit breaker") != std::string::npos);
}

TEST_CASE("tool calls and replies without code: asked again once, then the circuit breaker stops the operator",
          "[llm][operator]") {
  for (bool tool : {true, false}) {
    Fixture f(3);
    f.server.generate([tool](int) {
      return Server::Reply{200, tool ? Server::openai_tool_call(100, 20)
                                     : Server::openai_full("I would use an online softmax.", "stop", 100, 20)};
    });
    int made = 0;
    for (int i = 0; i < 200 && f.op->exhausted().empty(); ++i) made += static_cast<bool>(f.seed());
    CHECK(made == 0);
    CHECK(f.server.requests().size() == 6);  // 3 proposals x (the reply + one adjusted re-ask), not 603
    CHECK(f.op->unusable_replies() == 6);
    CHECK(f.op->fatal().find("circuit breaker") != std::string::npos);
    CHECK(f.op->exhausted() == f.op->fatal());
    CHECK(f.client->usage().input_tokens == 600);  // unusable replies are paid for: counted
    CHECK(f.client->usage().output_tokens == 120);
    const auto req = f.server.requests();
    CHECK(req[1].body.find(tool ? "it called a tool" : "it contains no source defining kevolve_kernel") !=
          std::string::npos);
    CHECK(req[1].body.find("ModelNew") == std::string::npos);  // the note speaks of this problem's kind only
  }
}

TEST_CASE("a permanent provider error stops the operator after one request", "[llm][operator]") {
  Fixture f;
  f.server.generate([](int) {
    return Server::Reply{
        401, Server::openai_error("Incorrect API key provided: sk-xx.", "invalid_request_error", "invalid_api_key")};
  });
  auto o = f.seed();
  REQUIRE_FALSE(o);
  CHECK(o.error().find("Incorrect API key provided") != std::string::npos);
  CHECK(f.op->exhausted().find("Incorrect API key provided") != std::string::npos);
  CHECK(f.op->fatal().find("HTTP 401") != std::string::npos);
  for (int i = 0; i < 10; ++i) CHECK_FALSE(f.seed());
  CHECK(f.server.requests().size() == 1);
}

TEST_CASE("soak: 50 children under 10% 429, 2% 529, 1% cut and 1% tool-call replies, every token accounted for",
          "[llm][operator][soak]") {
  Fixture f(8, "/tests/fixtures/problems/softmax_small/problem.toml", 4);
  std::mutex mu;
  int injected_429 = 0, injected_529 = 0, injected_cut = 0, injected_tool = 0, good = 0;
  int64_t sent_in = 0, sent_out = 0;
  f.server.generate([&](int n) {
    std::mt19937 rng(static_cast<unsigned>(n) * 7919u + 17u);
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const int latency = std::uniform_int_distribution<int>(2, 20)(rng);  // ms: the provider's 0.5-5 s, scaled
    const int in = std::uniform_int_distribution<int>(800, 2400)(rng),
              out = std::uniform_int_distribution<int>(150, 900)(rng);
    std::lock_guard<std::mutex> l(mu);
    if (u < 0.10) {
      ++injected_429;
      return Server::Reply{429,
                           Server::openai_error("Rate limit reached for fixture-model on requests per min (RPM).",
                                                "requests", "rate_limit_exceeded"),
                           {{"retry-after", "0.02"}},
                           latency};
    }
    if (u < 0.12) {
      ++injected_529;
      return Server::Reply{
          529, Server::anthropic_error("overloaded_error", "Overloaded"), {{"retry-after-ms", "15"}}, latency};
    }
    sent_in += in;
    if (u < 0.13) {
      ++injected_cut;
      sent_out += 4096;
      return Server::Reply{
          200, Server::openai_full("```cpp\n" + kernel(n).substr(0, 40), "length", in, 4096), {}, latency};
    }
    if (u < 0.14) {
      ++injected_tool;
      sent_out += out;
      return Server::Reply{200, Server::openai_tool_call(in, out), {}, latency};
    }
    ++good;
    sent_out += out;
    return Server::Reply{200, Server::openai_full(fenced(n), "stop", in, out), {}, latency};
  });
  std::atomic<int> slots{50}, children{0}, failed{0};
  std::vector<std::thread> lanes;
  for (int l = 0; l < 4; ++l)
    lanes.emplace_back([&] {
      while (slots-- > 0) {
        if (f.seed())
          ++children;
        else {
          ++failed;
          ++slots;  // a proposal that got nothing usable: its slot goes back
        }
        if (!f.op->exhausted().empty()) break;
      }
    });
  for (auto& t : lanes) t.join();
  const auto u = f.client->usage();
  const int injected = injected_429 + injected_529 + injected_cut + injected_tool;
  std::cout << "soak: " << f.server.requests().size() << " requests for " << children << " children; injected "
            << injected_429 << " x 429, " << injected_529 << " x 529, " << injected_cut << " cut, " << injected_tool
            << " tool calls; client: " << u.requests << " requests, " << u.retries << " retries, " << u.input_tokens
            << " input + " << u.output_tokens << " output tokens (server sent " << sent_in << " + " << sent_out << "), "
            << f.op->unusable_replies() << " unusable replies, " << failed << " proposals without a child, "
            << f.client->backoff_waits() << " starts held by a back-off\n";
  CHECK(children == 50);
  CHECK(f.op->exhausted().empty());
  CHECK(good == 50);  // every well-formed kernel reply became a child
  // No more requests than the budget plus one per injected failure, and exactly that many.
  CHECK(static_cast<int>(f.server.requests().size()) == 50 + injected);
  CHECK(u.requests == 50 + injected);
  CHECK(u.retries == injected_429 + injected_529);
  CHECK(f.op->unusable_replies() == injected_cut + injected_tool);
  // Exact accounting: every token the server reported, counted once; nothing estimated.
  CHECK(u.input_tokens == sent_in);
  CHECK(u.output_tokens == sent_out);
  CHECK(u.estimated_tokens == 0);
}

TEST_CASE("prompts: reference semantics, the evaluating machine, no contradiction on intrinsics, an example",
          "[llm][prompts]") {
  Fixture f(4, "/problems/core/merge_bucketized_dense/problem.toml");
  SearchGraph g;
  auto [system, user] = f.op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
  CHECK(system.find("no intrinsics headers") == std::string::npos);
  CHECK(system.find("<immintrin.h>") != std::string::npos);
  CHECK(user.find("bucketize(right=False) = number of boundaries < v") != std::string::npos);  // the spec's formula
  CHECK(user.find("at::bucketize(x.select(1, f), seg) + base") != std::string::npos);          // the libtorch reference
  CHECK(user.find("runs each candidate with 2 thread(s)") != std::string::npos);
  CHECK(user.find("An example of the kernel ABI") != std::string::npos);
}

TEST_CASE("prompts: the latest attempts with their outcomes, the best kernel's code, no 'where' on a correct parent",
          "[llm][prompts]") {
  Fixture f;
  f.server.push({200, Server::openai_full(fenced(1) + " Two passes, exp once per element.", "stop", 10, 10)});
  auto first = f.seed();
  REQUIRE(first);
  SearchGraph g;
  NodeRecord n1;
  n1.id = 1;
  n1.state = NodeState::scored;
  n1.status = EvalStatus::ok;
  n1.fitness = 1.5;
  n1.params = first->params;
  g.upsert(n1);
  NodeRecord n2;
  n2.id = 2;
  n2.parents = {1};
  n2.op = Operation::mutate;
  n2.state = NodeState::scored;
  n2.status = EvalStatus::incorrect;
  n2.message = "output 'y': 7 element(s) outside tolerance";
  g.upsert(n2);
  NodeRecord n3 = n1;
  n3.id = 3;
  n3.fitness = 0.5;
  n3.params = {{"source", "3"}};
  g.upsert(n3);
  OperatorContext ctx;
  ctx.parents.push_back({3, kernel(3),
                         "correct on 4 shapes x 5 trials; candidate 2 ms vs reference 1 ms (0.5x)\n"
                         "where: timed run on the bench shape, output 'y' at [2410, 166]"});
  ctx.best = {{1, kernel(1), ""}};
  auto [system, user] = f.op->prompts(Proposal{Operation::mutate, {3}, 0}, g, ctx);
  CHECK(user.find("## The latest attempts") != std::string::npos);
  CHECK(user.find("node 2 (mutate of node 1): incorrect: output 'y': 7 element(s)") != std::string::npos);
  CHECK(user.find("node 1 (seed): correct, 1.500x — it said: A plain kernel. Two passes") != std::string::npos);
  CHECK(user.find("Node 1, 1.500x over PyTorch:\n```cpp\n" + kernel(1)) != std::string::npos);  // the best's code
  CHECK(user.find("where: timed run") == std::string::npos);
  CHECK(user.find("correct on 4 shapes") != std::string::npos);
}

TEST_CASE("prompts: the best k kernels with their code, a diagnosis against the measured bandwidth, the machine",
          "[llm][prompts]") {
  Fixture f(4, "/problems/core/softmax_rows/problem.toml");
  SearchGraph g;
  OperatorContext ctx;
  for (uint64_t id = 1; id <= 4; ++id) {  // fitness 1.1, 1.2, 1.3, 1.4: node 4 is the best
    NodeRecord n;
    n.id = id;
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    n.fitness = 1.0 + 0.1 * static_cast<double>(id);
    n.candidate_ms = 10;
    n.params = {{"source", std::to_string(id)}};
    g.upsert(n);
  }
  NodeRecord slow;  // softmax_rows moves 67108864 bytes: 67.1 ms is 1 GB/s
  slow.id = 5;
  slow.parents = {4};
  slow.op = Operation::mutate;
  slow.state = NodeState::scored;
  slow.status = EvalStatus::ok;
  slow.fitness = 0.14;
  slow.candidate_ms = 67.108864;
  slow.params = {{"source", "5"}};
  g.upsert(slow);
  // The search hands over its best three (k = 3) and the parent with the bandwidth its device measured.
  for (uint64_t id : {4, 3, 2}) ctx.best.push_back({id, kernel(static_cast<int>(id)), "", 0});
  ctx.parents.push_back({5, kernel(5), "correct on 4 shapes x 5 trials; candidate 67.1 ms vs reference 9.4 ms", 20});
  ctx.device.copy_gbps = 20;
  auto [system, user] = f.op->prompts(Proposal{Operation::mutate, {5}, 0}, g, ctx);
  INFO(user);
  const size_t n4 = user.find("Node 4, 1.400x over PyTorch:\n```cpp\n" + kernel(4));
  const size_t n3 = user.find("Node 3, 1.300x over PyTorch:\n```cpp\n" + kernel(3));
  const size_t n2 = user.find("Node 2, 1.200x over PyTorch:\n```cpp\n" + kernel(2));
  CHECK(n4 != std::string::npos);
  CHECK(n3 != std::string::npos);
  CHECK(n2 != std::string::npos);
  CHECK((n4 < n3 && n3 < n2));                              // best first
  CHECK(user.find("Node 1, 1.100x") == std::string::npos);  // only k of them
  CHECK(user.find("far below the memory floor: compute- or latency-bound: 1.0 GB/s achieved, 5% of the device's "
                  "measured copy bandwidth (20.0 GB/s)") != std::string::npos);
  CHECK(user.find("The kernel is memory-bound") == std::string::npos);
  CHECK(user.find("Measured copy bandwidth: 20.0 GB/s") != std::string::npos);  // in the machine section
  CHECK(user.find("runs each candidate with 2 thread(s)") != std::string::npos);
  // The parent itself is shown once, in full, not again among the best.
  ctx.best.insert(ctx.best.begin(), {5, kernel(5), "", 0});
  auto [s2, with_parent] = f.op->prompts(Proposal{Operation::mutate, {5}, 0}, g, ctx);
  CHECK(with_parent.find("Node 5,") == std::string::npos);
}

TEST_CASE("prompts: a GPU search describes the GPU that evaluates (model, SMs, L2, measured bandwidth)",
          "[llm][prompts]") {
  EvaluatingDevice none;
  CHECK(describe_machine("cuda", "", none).empty());  // before any verdict, nothing is claimed
  CHECK(describe_machine("cuda", "NVIDIA H200", none) == "NVIDIA H200");
  EvaluatingDevice h200{"NVIDIA H200 (sm_90)", 132, 60 << 20, 3891.6};
  CHECK(describe_machine("cuda", "NVIDIA H200", h200) ==
        "NVIDIA H200 (sm_90): 132 SMs, L2 60 MiB, measured device-to-device copy bandwidth 3891.6 GB/s (bytes read "
        "+ written: the memory floor your kernel's time is compared with)");
  // Through the operator: the CUDA prompt carries the device of the latest verdict.
  Fixture f(4, "/problems/core/rmsnorm_fwd/problem.toml");
  auto prompts = PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(prompts);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/rmsnorm_fwd/problem.toml");
  REQUIRE(spec);
  LlmOperatorSetup s{f.client, *prompts, *spec, "rmsnorm", "nvidia-hopper", "warp_size = 32", nullptr, 1, "cuda"};
  LlmOperator op(s);
  OperatorContext ctx;
  ctx.device = h200;
  SearchGraph g;
  auto [system, user] = op.prompts(Proposal{Operation::seed, {}, 0}, g, ctx);
  CHECK(user.find("# The machine that evaluates your kernel\nNVIDIA H200 (sm_90): 132 SMs, L2 60 MiB") !=
        std::string::npos);
  CHECK(user.find("logical cores") == std::string::npos);  // not the CPU of the process that writes the prompt
}

TEST_CASE("knowledge notes are cut at a section boundary, never mid-word", "[llm][prompts]") {
  std::string note = "# Title\nintro words here\n\n## First\n" + std::string(1500, 'a') + " end\n\n## Second\n" +
                     std::string(1500, 'b') + " tail";
  const std::string cut = cut_note(note, 2500);
  CHECK(cut.size() < 2600);
  CHECK(cut.find("## Second") == std::string::npos);
  CHECK(cut.find(std::string(1500, 'a') + " end") != std::string::npos);
  CHECK(cut.find("[... the rest of this note") != std::string::npos);
  CHECK(cut_note("short", 2500) == "short");
  const std::string words = cut_note(std::string(3000, 'w') + " final", 100);  // one long word: cut at the limit
  CHECK(words.rfind("[...", std::string::npos) != std::string::npos);
}

TEST_CASE("a model that only repeats the search's kernels ends the search as out of ideas, not as an error",
          "[llm][operator]") {
  Fixture f(2);
  f.server.generate([](int) { return Server::Reply{200, Server::openai_full(fenced(1), "stop", 10, 10)}; });
  SearchGraph g;
  NodeRecord n;
  n.id = 1;
  n.params = {{"source", std::to_string(std::hash<std::string>{}(kernel(1)))}};
  g.upsert(n);
  Rng rng(1);
  for (int i = 0; i < 50 && f.op->exhausted().empty(); ++i)
    CHECK_FALSE(
        f.op->make(Proposal{Operation::mutate, {1}, 0}, g, rng, OperatorContext{{{1, kernel(1), ""}}, {}, {}, false}));
  CHECK(f.server.requests().size() == 4);  // 2 proposals x 2 replies, then the breaker (not 201 duplicates)
  CHECK(f.server.requests()[1].body.find("identical to one this search has already evaluated") != std::string::npos);
  CHECK(f.op->fatal().empty());  // the provider did nothing wrong: kevolve run exits 0
  CHECK(f.op->exhausted().find("only kernels this search has already evaluated, 2 proposals in a row") !=
        std::string::npos);
  CHECK(f.op->exhausted().find("run out of new ideas") != std::string::npos);
}

TEST_CASE("duplicates mixed with replies without code still open the circuit breaker as an error", "[llm][operator]") {
  Fixture f(2);
  // Proposal 1: a duplicate, then prose (no code); proposal 2: two duplicates.
  f.server.push({200, Server::openai_full(fenced(1), "stop", 10, 10)});
  f.server.push({200, Server::openai_full("I would rather explain it in words.", "stop", 10, 10)});
  f.server.push({200, Server::openai_full(fenced(1), "stop", 10, 10)});
  f.server.push({200, Server::openai_full(fenced(1), "stop", 10, 10)});
  SearchGraph g;
  NodeRecord n;
  n.id = 1;
  n.params = {{"source", std::to_string(std::hash<std::string>{}(kernel(1)))}};
  g.upsert(n);
  Rng rng(1);
  for (int i = 0; i < 2; ++i)
    CHECK_FALSE(
        f.op->make(Proposal{Operation::mutate, {1}, 0}, g, rng, OperatorContext{{{1, kernel(1), ""}}, {}, {}, false}));
  CHECK(f.server.requests().size() == 4);
  CHECK(f.op->fatal().find("circuit breaker") != std::string::npos);
}

TEST_CASE("the journal keeps every reply with its tokens and what the operator made of it", "[llm][journal]") {
  const std::string path = "/tmp/kevolve-journal-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  std::ofstream(path) << "{\"time\":1,\"search\":\"other\",\"model\":\"m\",\"attempt\":1,\"status\":200,"
                         "\"class\":\"ok\",\"input_tokens\":5,\"output_tokens\":5,\"text\":\"another search\"}\n";
  {
    Fixture f(4, "/tests/fixtures/problems/softmax_small/problem.toml", 0, path);
    f.server.push({200, Server::openai_full("Let me explain softmax in words instead.", "stop", 120, 30)});
    f.server.push({200, Server::openai_full(fenced(1), "stop", 140, 60)});
    REQUIRE(f.seed());
  }
  auto entries = llm::read_journal(path, "s1");
  REQUIRE(entries);
  REQUIRE(entries->size() == 2);  // the other search's line is left out
  const auto& first = (*entries)[0];
  CHECK(first.input_tokens == 120);
  CHECK(first.output_tokens == 30);
  CHECK(first.text == "Let me explain softmax in words instead.");
  CHECK(first.outcome == "not used: it contains no source defining kevolve_kernel");
  CHECK((*entries)[1].outcome == "used: llm fixture-model (seed)");
  const std::string shown = llm::format_journal_entry(first);
  CHECK(shown.find("fixture-model, attempt 1, HTTP 200, ok, request chatcmpl-7, finish stop, 120 input + 30 output "
                   "tokens\n  not used: it contains no source defining kevolve_kernel\n    Let me explain") !=
        std::string::npos);
  CHECK(llm::read_journal(path, "")->size() == 3);
  std::ofstream(path, std::ios::app) << "not json\n";
  auto bad = llm::read_journal(path, "s1");
  REQUIRE_FALSE(bad);
  CHECK(bad.code() == Errc::corrupt);
  CHECK(bad.error().find("line 6") != std::string::npos);
  CHECK(llm::read_journal(path + ".none", "s1").code() == Errc::not_found);
  std::remove(path.c_str());
}

// ---- Prompt facts: true or absent ----

namespace {

// The operator for a problem of problems/core with the x86 target's real constraints file.
std::shared_ptr<LlmOperator> core_operator(Fixture& f, const std::string& problem, const std::string& target,
                                           std::shared_ptr<KnowledgeBase> kb = nullptr) {
  auto prompts = PromptTemplates::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(prompts);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/" + problem + "/problem.toml");
  REQUIRE(spec);
  std::ifstream in(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge/hardware/" + target + "/constraints.toml");
  std::stringstream constraints;
  constraints << in.rdbuf();
  LlmOperatorSetup s{f.client, *prompts, *spec, spec->reference, target, constraints.str(), kb, 1};
  s.eval_threads = 2;
  return std::make_shared<LlmOperator>(s);
}

NodeRecord correct_node(uint64_t id, double candidate_ms, double reference_ms, std::vector<uint64_t> parents = {}) {
  NodeRecord n;
  n.id = id;
  n.parents = std::move(parents);
  n.op = n.parents.empty() ? Operation::seed : Operation::mutate;
  n.state = NodeState::scored;
  n.status = EvalStatus::ok;
  n.candidate_ms = candidate_ms;
  n.reference_ms = reference_ms;
  n.fitness = reference_ms / candidate_ms;
  n.params = {{"source", std::to_string(id)}};
  return n;
}

// The text between `from` (excluded) and the next `to` ("" when `from` is absent).
std::string section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t a = text.find(from);
  if (a == std::string::npos) return {};
  const size_t b = text.find(to, a + from.size());
  return text.substr(a + from.size(), b == std::string::npos ? std::string::npos : b - a - from.size());
}

// The numbers a text states: runs of digits and dots that are not part of a name ("avx2", "L1d", "sm_90",
// "2.20GHz" are names).
std::vector<std::string> numbers_in(const std::string& text) {
  std::vector<std::string> out;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && (word(text[i - 1]) || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    std::string n = text.substr(i, j - i);
    while (!n.empty() && n.back() == '.') n.pop_back();
    if (j >= text.size() || !word(text[j])) out.push_back(n);
    i = j;
  }
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether the number a text states (`stated`, as printed) is `x` rounded to the digits it shows (and 4
// significant digits at most).
bool near(const std::string& stated, double x) {
  const size_t dot = stated.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(stated.size() - dot - 1);
  return std::abs(std::stod(stated) - x) <= 0.5 * std::pow(10.0, -decimals) + 5e-4 * std::abs(x);
}

}  // namespace

TEST_CASE("prompts: a copy bandwidth the reference beat is refused and no memory floor is stated below it",
          "[llm][prompts][facts]") {
  // softmax_rows moves 67108864 bytes: the reference's 1.113 ms is 60.3 GB/s, the copy measured on a busy
  // machine 13.7 GB/s, whose floor (4.9 ms) the reference beats 4.4x.
  Fixture f;
  auto op = core_operator(f, "softmax_rows", "x86-avx2");
  SearchGraph g;
  g.upsert(correct_node(1, 5.0, 1.113));
  OperatorContext ctx;
  ctx.parents.push_back({1, kernel(1), "correct on 4 shapes x 5 trials; candidate 5 ms vs reference 1.113 ms", 13.7});
  ctx.device.copy_gbps = 13.7;
  auto [system, user] = op->prompts(Proposal{Operation::mutate, {1}, 0}, g, ctx);
  INFO(user);
  CHECK_FALSE(std::regex_search(user, std::regex("memory floor [0-9]")));
  CHECK(user.find("Measured copy bandwidth: 13.7") == std::string::npos);
  CHECK(user.find("Measured copy bandwidth: not stated. The copy measured during the evaluation gave 13.7 GB/s, but "
                  "the reference (timed with node 1) moved the problem's bytes at 60.3 GB/s") != std::string::npos);
  CHECK(user.find("is slower than the reference's own run (60.3 GB/s achieved)") != std::string::npos);
  CHECK(user.find("median times: the kernel 5 ms, the reference 1.113 ms") != std::string::npos);
  // A bandwidth no run beat is stated, and its floor is below every measured time.
  ctx.device.copy_gbps = ctx.parents[0].peak_gbps = 80;
  auto [s2, trusted] = op->prompts(Proposal{Operation::mutate, {1}, 0}, g, ctx);
  CHECK(trusted.find("Measured copy bandwidth: 80.0 GB/s") != std::string::npos);
  CHECK(trusted.find("memory floor 0.839 ms") != std::string::npos);
}

TEST_CASE("prompts: every number in the machine and measurement sections comes from the evaluation it describes",
          "[llm][prompts][facts]") {
  Fixture f;
  auto op = core_operator(f, "softmax_rows", "x86-avx512");
  SearchGraph g;
  g.upsert(correct_node(1, 20.48, 9.4));
  g.upsert(correct_node(2, 6.5, 9.3, {1}));
  OperatorContext ctx;
  ctx.parents.push_back({1, kernel(1), "correct on 4 shapes x 5 trials; candidate 20.48 ms vs reference 9.4 ms", 41.7});
  ctx.device.copy_gbps = 41.7;
  auto [system, user] = op->prompts(Proposal{Operation::mutate, {1}, 0}, g, ctx);
  INFO(user);

  // The machine section: this machine's facts (the CPU evaluator runs here) and the device's bandwidth.
  const std::string cpuinfo = read_all("/proc/cpuinfo");
  std::vector<double> facts = {static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)), 2, 41.7};
  for (auto key : {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE})
    if (sysconf(key) > 0) facts.push_back(static_cast<double>(sysconf(key) / 1024));
  const std::string model = section(cpuinfo, "model name\t: ", "\n");
  for (auto& n : numbers_in(model)) facts.push_back(std::stod(n));
  if (double khz = std::atof(read_all("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").c_str()); khz > 0)
    facts.push_back(std::round(khz / 1000));
  else
    facts.push_back(std::round(std::atof(section(cpuinfo, "cpu MHz\t\t: ", "\n").c_str())));
  const std::string machine = section(user, "# The machine that evaluates your kernel\n", "\n(The numbers above");
  REQUIRE(!machine.empty());
  CHECK(machine.find("vector ISA: ") != std::string::npos);
  for (auto& n : numbers_in(machine)) {
    INFO("machine section number " << n);
    CHECK(std::any_of(facts.begin(), facts.end(), [&](double x) { return near(n, x); }));
  }
  // Every ISA extension the kernel can use that this CPU has is named, and none it lacks.
  const std::string flags = " " + section(cpuinfo, "flags\t\t: ", "\n") + " ";
  for (const char* isa : {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile"}) {
    const bool has = flags.find(" " + std::string(isa) + " ") != std::string::npos;
    INFO(isa);
    const bool named = (section(machine, "vector ISA: ", ";") + ",").find(std::string(isa) + ",") != std::string::npos;
    CHECK(named == has);
  }

  // The measurement section (the diagnosis's summary): the node's times, the bytes and flops of the benchmark
  // shape, the device's bandwidth, and what follows from them; no floor below a measured time.
  const double bytes = 67108864, flops = 41943040, ms = 20.48, ref = 9.4, bw = 41.7;  // as the prompt states
  const double floor_ms = bytes / (bw * 1e9) * 1e3;
  const std::vector<double> derived = {bytes / (ms * 1e-3) / 1e9, 100 * bytes / (ms * 1e-3) / 1e9 / bw,
                                       bw, floor_ms, ms / floor_ms, flops / (ms * 1e-3) / 1e9, flops / bytes,
                                       ms, ref};
  CHECK(user.find("Roofline for the benchmark shape: 67108864 bytes moved, 41943040 flops.") != std::string::npos);
  const std::string summary = section(user, "## Diagnosis and directives\n- ", "\n");
  REQUIRE(summary.find("memory floor") != std::string::npos);
  for (auto& n : numbers_in(summary)) {
    INFO("measurement number " << n << " in: " << summary);
    CHECK(std::any_of(derived.begin(), derived.end(), [&](double x) { return near(n, x); }));
  }
  CHECK(floor_ms <= std::min({ms, ref, 6.5, 9.3}));
}

TEST_CASE("prompts: no hint of the target family contradicts the machine line (cores_hint, l1d_bytes_hint)",
          "[llm][prompts][facts]") {
  Fixture f;
  for (const char* target : {"x86-avx2", "x86-avx512"}) {
    auto op = core_operator(f, "softmax_rows", target);
    SearchGraph g;
    auto [system, user] = op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
    INFO(user);
    CHECK(user.find("logical cores on this machine") != std::string::npos);
    CHECK(user.find("cores_hint") == std::string::npos);
    CHECK(user.find("_hint") == std::string::npos);
    CHECK(user.find("vector_width_bytes") != std::string::npos);  // the family's real constraints stay
  }
  // Constraints from elsewhere: the hints go whenever the machine is described; a GPU's SM count and L2 once
  // the device stated its own.
  CHECK(machine_constraints("a = 1\ncores_hint = 16\nb = 2\n", true, {}) == "a = 1\nb = 2\n");
  CHECK(machine_constraints("cores_hint = 16", false, {}) == "cores_hint = 16");
  CHECK(machine_constraints("sm_count = 132\nwarp_size = 32\n", true, {"NVIDIA H100 PCIe", 114, 50 << 20, 0}) ==
        "warp_size = 32\n");
  CHECK(cpu_isa("processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_bf16 "
                "amx_tile amx_bf16 xsave\n") ==
        "sse4_2, avx, avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512_bf16, amx_tile, amx_bf16");
  CHECK(cpu_isa("flags\t\t: fpu sse2\n").empty());
}

TEST_CASE("prompts: every problem's inputs are listed in the order its reference code indexes them",
          "[llm][prompts][facts]") {
  Fixture f;
  int checked = 0;
  for (auto& e : std::filesystem::directory_iterator(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core")) {
    const std::string problem = e.path().filename().string();
    auto spec = load_problem(e.path().string() + "/problem.toml");
    if (!spec) continue;
    auto op = core_operator(f, problem, "x86-avx2");
    SearchGraph g;
    auto [system, user] = op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
    // The names listed under "Inputs (in order)", and those the reference code's registration gives i[0], i[1], ...
    std::vector<std::string> listed, indexed;
    std::istringstream lines(section(user, "Inputs (in order):\n", "Outputs (in order)"));
    for (std::string l; std::getline(lines, l);)
      if (l.rfind("- `", 0) == 0) listed.push_back(l.substr(3, l.find('`', 3) - 3));
    std::smatch m;
    const std::string code = section(user, "The libtorch reference", "```\n\n");
    static const std::regex names(R"re(\{((?:"\w+"(?:, )?)+)\},\s*\[\]\(const Tensors& in)re");
    if (!std::regex_search(code, m, names)) continue;  // no libtorch reference shown
    const std::string inner = m[1].str();
    static const std::regex quoted(R"re("(\w+)")re");
    for (auto it = std::sregex_iterator(inner.begin(), inner.end(), quoted);
         it != std::sregex_iterator(); ++it)
      indexed.push_back((*it)[1].str());
    INFO(problem);
    CHECK(listed == indexed);
    ++checked;
  }
  CHECK(checked >= 10);
  // The issue's case: merge_bucketized_dense's reference reads the offsets as i[1], as a kernel reads inputs[1].
  auto op = core_operator(f, "merge_bucketized_dense", "x86-avx2");
  SearchGraph g;
  auto [system, user] = op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
  const size_t x = user.find("\n- `x`: "), offsets = user.find("\n- `offsets`: "), b = user.find("\n- `boundaries`: ");
  CHECK((x < offsets && offsets < b && b != std::string::npos));
  CHECK(user.find("const auto off = i[1]") != std::string::npos);
}

TEST_CASE("prompts: each history line gives the node's time and its change against its parent",
          "[llm][prompts][facts]") {
  Fixture f;
  auto op = core_operator(f, "softmax_rows", "x86-avx2");
  SearchGraph g;
  g.upsert(correct_node(4, 10, 9.4));
  g.upsert(correct_node(5, 26, 9.4, {4}));
  g.upsert(correct_node(6, 7.5, 9.5, {4}));
  g.upsert(correct_node(7, 10.1, 9.4, {4}));
  g.upsert(correct_node(8, 12, 9.4));
  OperatorContext ctx;
  ctx.parents.push_back({8, kernel(8), "correct", 0});
  auto [system, user] = op->prompts(Proposal{Operation::mutate, {8}, 0}, g, ctx);
  INFO(user);
  CHECK(user.find("- node 5 (mutate of node 4): correct, 0.362x, 26 ms (reference 9.4 ms, median times), 2.6x slower "
                  "than its parent node 4 (10 ms)") != std::string::npos);
  CHECK(user.find("- node 6 (mutate of node 4): correct, 1.267x, 7.5 ms (reference 9.5 ms, median times), 1.3x "
                  "faster than its parent node 4 (10 ms)") != std::string::npos);
  CHECK(user.find("- node 7 (mutate of node 4): correct, 0.931x, 10.1 ms (reference 9.4 ms, median times), as fast "
                  "as its parent node 4 (within 2%) (10 ms)") != std::string::npos);
  CHECK(user.find("- node 4 (seed): correct, 0.940x, 10 ms (reference 9.4 ms, median times)\n") != std::string::npos);
  // The parent, shown in full, says the same of itself.
  ctx.parents[0] = {5, kernel(5), "correct", 0};
  auto [s2, from5] = op->prompts(Proposal{Operation::mutate, {5}, 0}, g, ctx);
  CHECK(from5.find("## The kernel to start from (node 5, ok, 0.361538x over PyTorch, 26 ms (reference 9.4 ms, median "
                   "times), 2.6x slower than its parent node 4 (10 ms))") != std::string::npos);
}

TEST_CASE("prompts: the problem's own knowledge note comes first and whole within the stated budget",
          "[llm][prompts][facts]") {
  auto kb = KnowledgeBase::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(kb);
  const KbDocument* own = nullptr;
  for (auto& d : (*kb)->documents())
    if (d.path == "patterns/bucketize-per-feature.md") own = &d;
  REQUIRE(own);
  REQUIRE(own->body.size() > 2500);  // what the former per-note cut of 2500 characters lost most of
  Fixture f;
  auto op = core_operator(f, "merge_bucketized_dense", "x86-avx2", *kb);
  SearchGraph g;
  auto [system, user] = op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
  const std::string notes = section(user, "## Notes from the knowledge base\n", "\n# How to answer");
  REQUIRE(!notes.empty());
  CHECK(notes.find("12000 characters of notes at most") != std::string::npos);
  const size_t first = notes.find("### ");
  CHECK(notes.substr(first, notes.find('\n', first) - first) ==
        "### " + own->title + " (patterns/bucketize-per-feature.md)");
  CHECK(notes.find(own->body) != std::string::npos);  // whole
  // The budget is shared: whole notes while they fit, one cut at a section boundary, the rest named.
  const FittedNotes fitted = fit_notes({{"A", "a.md", std::string(7000, 'a')},
                                        {"B", "b.md", "# B\n" + std::string(3000, 'b') + "\n\n## More\n" +
                                                          std::string(3000, 'c')},
                                        {"C", "c.md", std::string(3000, 'c')}},
                                       12000);
  REQUIRE(fitted.notes.size() == 2);
  CHECK(fitted.notes[0].text == std::string(7000, 'a'));
  CHECK(fitted.notes[1].text.find("## More") == std::string::npos);
  CHECK(fitted.notes[1].text.find("[... the rest of this note") != std::string::npos);
  CHECK(fitted.notes[0].text.size() + fitted.notes[1].text.size() <= 12000);
  CHECK(fitted.left_out == "C (c.md, 3000 characters)");
}

// The three prompts docs/llm-operator.md shows (first child, after a failure, after a slow kernel), written to
// $KEVOLVE_DOC_PROMPTS/{first,failed,slow}.txt when that variable is set. Hidden: run it by its tag.
TEST_CASE("docs: the three example prompts", "[.][docs]") {
  const char* dir = std::getenv("KEVOLVE_DOC_PROMPTS");
  if (!dir) return;
  auto kb = KnowledgeBase::load(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
  REQUIRE(kb);
  Fixture f;
  auto op = core_operator(f, "softmax_rows", "x86-avx2", *kb);
  auto write = [&](const char* name, const std::pair<std::string, std::string>& p) {
    std::ofstream(std::string(dir) + "/" + name + ".txt") << "[system]\n" << p.first << "\n[user]\n" << p.second;
  };
  SearchGraph g;
  write("first", op->prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{}));
  NodeRecord bad;
  bad.id = 1;
  bad.state = NodeState::scored;
  bad.status = EvalStatus::incorrect;
  bad.reason = "mismatch";
  bad.message = "output 'y': 7 element(s) outside tolerance, first at [0, 32]: got 0, expected 0.0123 (max abs err "
                "0.0123) (verify[0] (C=33, R=7), trial 0)";
  bad.params = {{"source", "1"}};
  g.upsert(bad);
  OperatorContext failed;
  failed.parents.push_back({1, kernel(1), bad.message + "\nwhere: verify[0] (C=33, R=7), trial 0, output 'y' [0, 32]", 0});
  write("failed", op->prompts(Proposal{Operation::repair, {1}, 0}, g, failed));
  g.upsert(correct_node(2, 9.6, 9.4, {1}));
  g.upsert(correct_node(3, 25.0, 9.4, {2}));
  OperatorContext slow;
  slow.parents.push_back({3, kernel(3),
                          "correct on 4 shapes x 5 trials; candidate 25 ms vs reference 9.4 ms (0.376x)", 41.7});
  slow.best = {{2, kernel(2), "", 0}};
  slow.device.copy_gbps = 41.7;
  write("slow", op->prompts(Proposal{Operation::mutate, {3}, 0}, g, slow));
}
