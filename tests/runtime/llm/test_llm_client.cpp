// The LLM providers against a real HTTP server on 127.0.0.1: both protocols, and every failure a real
// endpoint gives — 429 with Retry-After, 5xx, malformed JSON, truncated bodies, empty choices, slowness.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "fake_llm_server.hpp"
#include "runtime/llm/llm_client.hpp"

using namespace kevolve;
using namespace kevolve::llm;
using Server = kevolve::test::FakeLlmServer;

namespace {

LlmConfig config(const Server& s, const std::string& provider = "openai") {
  LlmConfig c;
  c.provider = provider;
  c.endpoint = s.url(provider == "openai" ? "/v1/chat/completions" : "/v1/messages");
  c.model = "test-model";
  c.api_key_env = "KEVOLVE_TEST_LLM_KEY";
  c.timeout_s = 5;
  c.retries = 3;
  c.backoff_s = 0.01;
  c.cost_per_mtok_in = 1.0;
  c.cost_per_mtok_out = 2.0;
  setenv("KEVOLVE_TEST_LLM_KEY", "sk-test-secret-42", 1);
  return c;
}

std::shared_ptr<LlmClient> client(const LlmConfig& c) {
  auto made = LlmClient::create(c);
  REQUIRE(made);
  return *made;
}

}  // namespace

TEST_CASE("OpenAI-compatible chat completion: request, reply, tokens and cost", "[llm]") {
  Server s;
  s.push({200, Server::openai_body("```cpp\nint x;\n```", 100, 50)});
  auto c = client(config(s));
  auto r = c->complete("you write kernels", "make it fast");
  REQUIRE(r);
  CHECK(r->text == "```cpp\nint x;\n```");
  CHECK(r->input_tokens == 100);
  CHECK(r->output_tokens == 50);
  auto req = s.requests().at(0);
  CHECK(req.target == "/v1/chat/completions");
  CHECK(req.headers.at("authorization") == "Bearer sk-test-secret-42");
  CHECK(req.body.find("\"model\":\"test-model\"") != std::string::npos);
  CHECK(req.body.find("\"role\":\"system\",\"content\":\"you write kernels\"") != std::string::npos);
  CHECK(c->usage().cost == Approx((100 * 1.0 + 50 * 2.0) / 1e6));
}

TEST_CASE("Anthropic Messages: headers, system prompt and content blocks", "[llm]") {
  Server s;
  s.push({200, Server::anthropic_body("hello kernel")});
  auto c = client(config(s, "anthropic"));
  auto r = c->complete("sys", "user");
  REQUIRE(r);
  CHECK(r->text == "hello kernel");
  auto req = s.requests().at(0);
  CHECK(req.headers.at("x-api-key") == "sk-test-secret-42");
  CHECK(req.headers.at("anthropic-version") == "2023-06-01");
  CHECK(req.body.find("\"system\":\"sys\"") != std::string::npos);
}

TEST_CASE("429 with Retry-After and 5xx are retried with back-off", "[llm]") {
  Server s;
  s.push({429, "{\"error\":\"slow down\"}", {{"Retry-After", "1"}}});
  s.push({500, "oops"});
  s.push({503, "busy"});
  s.push({200, Server::openai_body("ok")});
  auto c = config(s);
  c.backoff_s = 0.1;  // waits 0.1 * 2^attempt after a 5xx
  auto r = client(c)->complete("s", "u");
  REQUIRE(r);
  CHECK(r->attempts == 4);
  const auto req = s.requests();
  REQUIRE(req.size() == 4);
  // Measured on the server's clock: the pause before each retry is at least what was asked for
  // (lower bounds only: a slow machine waits longer, never shorter).
  auto gap = [&](size_t i) { return std::chrono::duration<double>(req[i].at - req[i - 1].at).count(); };
  CHECK(gap(1) >= 0.95);  // Retry-After: 1
  CHECK(gap(2) >= 0.19);  // after the 500 (attempt 1): 0.2 s
  CHECK(gap(3) >= 0.39);  // after the 503 (attempt 2): 0.4 s
}

TEST_CASE("malformed JSON, empty choices and truncated bodies are errors after the retries", "[llm]") {
  Server s;
  auto c = config(s);
  c.retries = 1;
  for (int i = 0; i < 2; ++i) s.push({200, "{\"choices\": [ {\"message\": "});
  auto r = client(c)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("malformed reply") != std::string::npos);
  CHECK(r.error().find("2 attempts") != std::string::npos);

  for (int i = 0; i < 2; ++i) s.push({200, "{\"choices\": []}"});
  r = client(c)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("no choices") != std::string::npos);

  for (int i = 0; i < 2; ++i) s.push({200, Server::openai_body("a long reply that will be cut"), {}, 0, true});
  r = client(c)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("truncated") != std::string::npos);
}

TEST_CASE("a slow endpoint times out, and a client error is not retried", "[llm]") {
  Server s;
  auto c = config(s);
  c.timeout_s = 0.3;
  c.retries = 0;
  s.push({200, Server::openai_body("late"), {}, 1500});
  auto r = client(c)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("timed out") != std::string::npos);

  Server s2;
  auto c2 = config(s2);
  s2.push({400, "{\"error\":\"bad key sk-test-secret-42\"}"});
  r = client(c2)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(s2.requests().size() == 1);
  CHECK(r.error().find("HTTP 400") != std::string::npos);
  CHECK(r.error().find("sk-test-secret-42") == std::string::npos);  // never leak the key
}

TEST_CASE("configuration errors name the key: missing key variable, bad endpoint, unknown provider", "[llm]") {
  Server s;
  auto c = config(s);
  c.api_key_env = "KEVOLVE_TEST_NO_SUCH_VARIABLE";
  unsetenv("KEVOLVE_TEST_NO_SUCH_VARIABLE");
  auto made = LlmClient::create(c);
  REQUIRE_FALSE(made);
  CHECK(made.error().find("KEVOLVE_TEST_NO_SUCH_VARIABLE") != std::string::npos);
  c = config(s);
  c.endpoint = "ftp://x";
  CHECK(LlmClient::create(c).error().find("llm.endpoint") != std::string::npos);
  c = config(s);
  c.provider = "palm";
  CHECK(LlmClient::create(c).error().find("llm.provider") != std::string::npos);
}

TEST_CASE("an unreachable endpoint fails with a clear message", "[llm]") {
  LlmConfig c;
  c.endpoint = "http://127.0.0.1:1/v1/chat/completions";
  c.model = "m";
  c.retries = 0;
  auto made = LlmClient::create(c);
  REQUIRE(made);
  auto r = (*made)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("cannot connect") != std::string::npos);
}

TEST_CASE("a token budget stops further requests", "[llm]") {
  Server s;
  auto c = config(s);
  c.token_budget = 120;
  s.push({200, Server::openai_body("```cpp\nkevolve_kernel\n```", 100, 50)});
  s.push({200, Server::openai_body("never asked")});
  auto cl = client(c);
  REQUIRE(cl->complete("s", "u"));
  CHECK_FALSE(cl->budget_exhausted().empty());
  auto r = cl->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("token budget") != std::string::npos);
  CHECK(s.requests().size() == 1);
}

TEST_CASE("an ensemble request names the model chosen for it", "[llm]") {
  Server s;
  auto c = config(s);
  c.ensemble = {{"big-model", 3.0}, {"small-model", 1.0}};
  s.push({200, Server::openai_body("x")});
  auto cl = client(c);
  REQUIRE(cl->complete("s", "u", "small-model"));
  CHECK(s.requests().at(0).body.find("\"model\":\"small-model\"") != std::string::npos);
  c.ensemble = {{"", 1.0}};
  CHECK_FALSE(LlmClient::create(c));
}

TEST_CASE("HTTPS: the certificate is verified, against a private CA when ca_file names one", "[llm][tls]") {
  const std::string fx = std::string(KEVOLVE_SOURCE_DIR) + "/tests/fixtures/tls/";
  Server s(fx + "server.pem", fx + "server.key");
  REQUIRE(s.url("/").rfind("https://127.0.0.1:", 0) == 0);
  s.push({200, Server::openai_body("over TLS")});
  LlmConfig c = config(s);
  c.retries = 0;
  c.ca_file = fx + "ca.pem";
  auto r = client(c)->complete("sys", "user");
  REQUIRE(r);
  CHECK(r->text == "over TLS");
  REQUIRE(s.requests().size() == 1);
  CHECK(s.requests()[0].headers.at("authorization") == "Bearer sk-test-secret-42");  // the key travelled encrypted

  // The system's CAs do not know the test CA: the handshake fails and says so; nothing is sent.
  c.ca_file.clear();
  auto refused = client(c)->complete("sys", "user");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("TLS handshake") != std::string::npos);
  CHECK(refused.error().find("sk-test-secret-42") == std::string::npos);
  CHECK(s.requests().size() == 1);

  // A CA file that does not exist is named.
  c.ca_file = fx + "no-such-ca.pem";
  auto missing = client(c)->complete("sys", "user");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("llm.ca_file") != std::string::npos);
  CHECK(missing.error().find("no-such-ca.pem") != std::string::npos);
}
