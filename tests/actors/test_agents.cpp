// The deep-search agent as an actor (retrieval filtered by hardware and problem), and the operator side
// of it: the LLM operator asks for what its child's context needs and puts what it is given in the prompt.
#include <catch2/catch.hpp>

#include "../runtime/llm/fake_llm_server.hpp"
#include "actors/deep_search/deep_search_actor.hpp"
#include "runtime/llm/llm_client.hpp"
#include "runtime/operators/llm_operator.hpp"
#include "runtime/config/problem_loader.hpp"

using namespace kevolve;

namespace {
const std::string kRoot = std::string(KEVOLVE_SOURCE_DIR) + "/knowledge";
}

TEST_CASE("the deep-search actor answers retrieval queries from the knowledge base", "[agents]") {
  auto kb = KnowledgeBase::load(kRoot);
  REQUIRE(kb);
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kevolve>();
  caf::actor_system sys{cfg};
  auto deep = spawn_deep_search_actor(sys, *kb);
  caf::scoped_actor self{sys};
  std::vector<KbHit> hits;
  self->request(deep, std::chrono::seconds(10), atoms::kb_atom::value,
                KbQuery{"online softmax running maximum rescale", "x86-avx2", "", 3})
      .receive([&](std::vector<KbHit>& h) { hits = std::move(h); }, [](caf::error&) { FAIL("no answer"); });
  REQUIRE_FALSE(hits.empty());
  CHECK(hits.front().path == "patterns/online-softmax.md");
  // Filtered by hardware: Hopper notes for a Hopper question, never the AVX-512 notes.
  self->request(deep, std::chrono::seconds(10), atoms::kb_atom::value,
                KbQuery{"warp shuffle reduction shared memory", "nvidia-hopper", "", 5})
      .receive([&](std::vector<KbHit>& h) { hits = std::move(h); }, [](caf::error&) { FAIL("no answer"); });
  REQUIRE_FALSE(hits.empty());
  for (auto& h : hits) CHECK(h.path.find("x86-avx512") == std::string::npos);
  self->send_exit(deep, caf::exit_reason::user_shutdown);
}

TEST_CASE(
    "the LLM operator's retrieval query follows the parent's diagnosis, and the prompt carries what was retrieved",
    "[agents]") {
  auto kb = KnowledgeBase::load(kRoot);
  REQUIRE(kb);
  auto prompts = PromptTemplates::load(kRoot);
  REQUIRE(prompts);
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/problems/softmax_small/problem.toml");
  REQUIRE(spec);
  llm::LlmConfig lc;
  lc.endpoint = "http://127.0.0.1:9/v1/chat/completions";  // never contacted: prompts only
  lc.model = "m";
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  LlmOperator op(LlmOperatorSetup{*client, *prompts, *spec, "torch.softmax(x, -1)", "x86-avx2",
                                  "vector_width_bytes = 32", *kb, 1});
  REQUIRE(op.knowledge_base());

  SearchGraph g;
  NodeRecord parent;
  parent.id = 1;
  parent.state = NodeState::scored;
  parent.status = EvalStatus::incorrect;
  parent.reason = "nonfinite";
  g.upsert(parent);
  OperatorContext ctx;
  ctx.parents.push_back({1, "// parent source", "output 'y' has NaN at [3, 5]"});
  const Proposal repair{Operation::repair, {1}, 0};
  const KbQuery q = op.knowledge_query(repair, g, ctx);
  CHECK(q.hardware == "x86-avx2");
  CHECK(q.problem == spec->name);
  CHECK(q.text.find("incorrect: nonfinite") !=
        std::string::npos);  // the diagnosis of the failed parent drives retrieval
  CHECK(q.text.find("NaN") != std::string::npos);

  ctx.knowledge_given = true;
  ctx.knowledge = {{"debugging/numerical-mismatch-patterns.md", "given by the agent", 1.0, ""}};
  const auto [system, user] = op.prompts(repair, g, ctx);
  bool found = false;
  for (auto& d : (*kb)->documents())
    if (d.path == "debugging/numerical-mismatch-patterns.md") found = user.find(d.title) != std::string::npos;
  CHECK(found);
}

TEST_CASE("for the CUDA backend the LLM operator asks for kernel-only CUDA and hands back CUDA candidates",
          "[agents][cuda]") {
  kevolve::test::FakeLlmServer server;
  const std::string cuda_reply =
      "Here is a first kernel.\n```cuda\n#include \"kevolve_kernel.h\"\n// @kevolve kernel gelu_k\n// @kevolve grid "
      "cdiv(N, 256)\n"
      "// @kevolve block 256\nextern \"C\" __global__ void gelu_k(const kv_cuda_args a) {\n"
      "  long long i = blockIdx.x * 256LL + threadIdx.x;\n  if (i < kv_numel(&a.inputs[0])) {\n"
      "    float x = ((const float*)a.inputs[0].data)[i];\n    ((float*)a.outputs[0].data)[i] = 0.5f * x * (1.f + "
      "erff(x * 0.70710678f));\n  }\n}\n```\n";
  server.push({200, kevolve::test::FakeLlmServer::openai_body(cuda_reply)});
  auto prompts = PromptTemplates::load(kRoot);
  REQUIRE(prompts);
  REQUIRE_FALSE(prompts->system_cuda.empty());
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/gelu/problem.toml");
  REQUIRE(spec);
  llm::LlmConfig lc;
  lc.endpoint = server.url("/v1/chat/completions");
  lc.model = "m";
  lc.retries = 0;
  auto client = llm::LlmClient::create(lc);
  REQUIRE(client);
  LlmOperator op(
      LlmOperatorSetup{*client, *prompts, *spec, "F.gelu(x)", "nvidia-hopper", "warp_size = 32", nullptr, 1, "cuda"});
  SearchGraph g;
  const auto [system, user] = op.prompts(Proposal{Operation::seed, {}, 0}, g, OperatorContext{});
  CHECK(system.find("kv_cuda_args") != std::string::npos);
  CHECK(system.find("// @kevolve grid") != std::string::npos);
  CHECK(system.find("g++") == std::string::npos);       // not the CPU rules
  CHECK(user.find("N=67108864") != std::string::npos);  // the GPU benchmark size, not the CPU one
  Rng rng(1);
  auto child = op.make(Proposal{Operation::seed, {}, 0}, g, rng, OperatorContext{});
  REQUIRE(child);
  CHECK(child->candidate.language == "cuda");
  CHECK(child->candidate.source.find("// @kevolve kernel gelu_k") != std::string::npos);
  CHECK(child->candidate.source.find("Here is") == std::string::npos);
}
