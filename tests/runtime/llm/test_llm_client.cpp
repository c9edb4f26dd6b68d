// The LLM providers against a real HTTP server on 127.0.0.1: both protocols, and every failure a real
// endpoint gives — 429 with Retry-After, 5xx, malformed JSON, truncated bodies, empty choices, slowness.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_llm_server.hpp"
#include "runtime/llm/error_policy.hpp"
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

// ---- Error classes: permanent errors stop at once, transient ones are retried with one shared back-off ----

TEST_CASE("a permanent error (401) is one request and the client then refuses without sending", "[llm][errors]") {
  Server s;
  s.push({401, Server::openai_error("Incorrect API key provided: sk-test-secret-42.", "invalid_request_error",
                                    "invalid_api_key")});
  auto cl = client(config(s));
  auto r = cl->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(s.requests().size() == 1);
  CHECK(r.error().find("HTTP 401") != std::string::npos);
  CHECK(r.error().find("Incorrect API key provided") != std::string::npos);  // the provider's own words
  CHECK(r.error().find("sk-test-secret-42") == std::string::npos);
  CHECK(cl->permanent_error() == r.error());
  CHECK(cl->budget_exhausted() == r.error());
  for (int i = 0; i < 5; ++i) CHECK_FALSE(cl->complete("s", "u"));
  CHECK(s.requests().size() == 1);  // no storm: nothing more was sent
}

TEST_CASE("400 invalid request, 403 and 404 are permanent and name the provider's message", "[llm][errors]") {
  for (int status : {400, 403, 404}) {
    Server s;
    s.push({status, Server::openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                         "'max_completion_tokens' instead.",
                                         "invalid_request_error", "unsupported_parameter")});
    auto cl = client(config(s));
    auto r = cl->complete("s", "u");
    REQUIRE_FALSE(r);
    CHECK(s.requests().size() == 1);
    CHECK(r.error().find("Unsupported parameter: 'max_tokens'") != std::string::npos);
    CHECK_FALSE(cl->permanent_error().empty());
  }
}

TEST_CASE("quota and spend-limit 429s are permanent and a rate-limit 429 is retried", "[llm][errors]") {
  Server s;
  s.push({429, Server::openai_error("You exceeded your current quota, please check your plan and billing details.",
                                    "insufficient_quota", "insufficient_quota")});
  auto r = client(config(s))->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(s.requests().size() == 1);
  CHECK(r.error().find("quota or spend limit") != std::string::npos);
  CHECK(r.error().find("You exceeded your current quota") != std::string::npos);

  Server a;
  a.push({429, Server::anthropic_error("rate_limit_error",
                                       "You have reached your specified API usage limits. You will regain access on "
                                       "2026-12-01 at 00:00 UTC.")});
  auto ra = client(config(a, "anthropic"))->complete("s", "u");
  REQUIRE_FALSE(ra);
  CHECK(a.requests().size() == 1);
  CHECK(ra.error().find("API usage limits") != std::string::npos);

  Server t;
  t.push({429,
          Server::openai_error("Rate limit reached for test-model on tokens per min (TPM): Limit 30000, Used 29000.",
                               "tokens", "rate_limit_exceeded"),
          {{"retry-after-ms", "20"}}});
  t.push({200, Server::openai_body("ok")});
  auto cl = client(config(t));
  auto rt = cl->complete("s", "u");
  REQUIRE(rt);
  CHECK(t.requests().size() == 2);
  CHECK(cl->usage().retries == 1);
  CHECK(cl->permanent_error().empty());
}

TEST_CASE("408, 409 and 529 are retried and 5xx too", "[llm][errors]") {
  Server s;
  s.push({408, "{\"error\":\"request timeout\"}"});
  s.push({409, "{\"error\":\"conflict\"}"});
  s.push({529, Server::anthropic_error("overloaded_error", "Overloaded"), {{"retry-after-ms", "10"}}});
  s.push({200, Server::anthropic_body("fine")});
  auto c = config(s, "anthropic");
  auto r = client(c)->complete("s", "u");
  REQUIRE(r);
  CHECK(r->attempts == 4);
  CHECK(s.requests().size() == 4);
}

TEST_CASE("retry-after: milliseconds, seconds and HTTP dates", "[llm][errors]") {
  const std::time_t now = 1445412480;  // Wed, 21 Oct 2015 07:28:00 GMT
  CHECK(retry_after_seconds({{"retry-after-ms", "250"}}, now) == Approx(0.25));
  CHECK(retry_after_seconds({{"retry-after-ms", "250"}, {"retry-after", "9"}}, now) == Approx(0.25));
  CHECK(retry_after_seconds({{"retry-after", "2.5"}}, now) == Approx(2.5));
  CHECK(retry_after_seconds({{"retry-after", "Wed, 21 Oct 2015 07:28:30 GMT"}}, now) == Approx(30));
  CHECK(retry_after_seconds({{"retry-after", "Wed, 21 Oct 2015 07:27:00 GMT"}}, now) == Approx(0));  // past
  CHECK(retry_after_seconds({{"retry-after", "soon"}}, now) < 0);
  CHECK(retry_after_seconds({}, now) < 0);
  auto v = classify_http(529, {{"retry-after", "3"}}, Server::anthropic_error("overloaded_error", "Overloaded"));
  CHECK(v.cls == ErrorClass::transient);
  CHECK(v.retry_after_s == Approx(3));
  CHECK(v.reason == "HTTP 529 (overloaded): Overloaded");
}

TEST_CASE("one back-off for all requests: a request started during another's back-off waits it out", "[llm][errors]") {
  Server s;
  s.push({429, "{\"error\":{\"message\":\"slow down\"}}", {{"retry-after", "1"}}});
  s.push({200, Server::openai_body("a")});
  s.push({200, Server::openai_body("b")});
  auto c = config(s);
  c.concurrency = 2;
  auto cl = client(c);
  std::thread first([&] { REQUIRE(cl->complete("s", "first")); });
  while (s.requests().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the 429 has come back: the back-off is set
  REQUIRE(cl->complete("s", "second"));
  first.join();
  const auto req = s.requests();
  REQUIRE(req.size() == 3);
  // The second request was held back by the first one's back-off: nothing reached the server before the
  // provider's retry-after was over (a lower bound: a slow machine waits longer, never shorter).
  for (size_t i = 1; i < req.size(); ++i) CHECK(std::chrono::duration<double>(req[i].at - req[0].at).count() >= 0.95);
  CHECK(cl->backoff_waits() >= 2);
}

TEST_CASE("a per-minute request limit spaces the requests", "[llm][errors]") {
  Server s;
  for (int i = 0; i < 3; ++i) s.push({200, Server::openai_body("x")});
  auto c = config(s);
  c.requests_per_minute = 600;  // one every 0.1 s
  auto cl = client(c);
  for (int i = 0; i < 3; ++i) REQUIRE(cl->complete("s", "u"));
  const auto req = s.requests();
  REQUIRE(req.size() == 3);
  // The server stamps a request when it has read it: the client sends the i-th no sooner than 0.1 s x i after
  // the first, and the first may have taken a few milliseconds to arrive (20 ms allowed; without the limit
  // the three arrive within a millisecond or two).
  for (size_t i = 1; i < req.size(); ++i)
    CHECK(std::chrono::duration<double>(req[i].at - req[0].at).count() >= 0.1 * static_cast<double>(i) - 0.02);
}

// ---- Replies that are paid for but cannot be used: returned once, flagged, tokens counted ----

TEST_CASE("a tool call with null content, a cut reply and reasoning_content: one request each, tokens counted",
          "[llm][replies]") {
  Server s;
  s.push({200, Server::openai_tool_call(120, 30)});
  s.push({200, Server::openai_full("```cpp\n#include \"kevolve_kernel.h\"\nextern \"C\" int kevolve_", "length", 200,
                                   4096)});
  s.push({200, Server::openai_full("the answer", "stop", 10, 20, "first I thought about ```cpp drafts```")});
  auto cl = client(config(s));
  auto tool = cl->complete("s", "u");
  REQUIRE(tool);
  CHECK(tool->tool_call);
  CHECK(tool->text.empty());
  CHECK(tool->finish_reason == "tool_calls");
  auto cut = cl->complete("s", "u");
  REQUIRE(cut);
  CHECK(cut->truncated);
  auto reasoned = cl->complete("s", "u");
  REQUIRE(reasoned);
  CHECK(reasoned->text == "the answer");  // reasoning_content is not the answer
  CHECK(reasoned->request_id == "chatcmpl-7");
  CHECK(s.requests().size() == 3);
  const Usage u = cl->usage();
  CHECK(u.input_tokens == 330);
  CHECK(u.output_tokens == 30 + 4096 + 20);
  CHECK(u.truncated == 1);
  CHECK(u.tool_calls == 1);
}

TEST_CASE("Anthropic: text blocks joined as the provider split them, thinking left out, stop_reason and cache tokens",
          "[llm][replies]") {
  Server s;
  s.push({200, Server::anthropic_blocks({{"thinking", "a draft: ```cpp\nint x;\n```"},
                                         {"text", "Here is the kernel:\n\n"},
                                         {"text", "```cpp\nint y;\n```"}},
                                        "end_turn", 10, 50, 1000, 2000)});
  s.push({200, Server::anthropic_blocks({{"text", "```cpp\nint z"}}, "max_tokens", 7, 4096)});
  auto c = config(s, "anthropic");
  c.cost_per_mtok_in = 3.0;
  c.cost_per_mtok_out = 15.0;
  auto cl = client(c);
  auto r = cl->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "Here is the kernel:\n\n```cpp\nint y;\n```");
  CHECK(r->reasoning);
  CHECK(r->input_tokens == 10 + 1000 + 2000);
  CHECK(r->cache_creation_tokens == 1000);
  CHECK(r->cache_read_tokens == 2000);
  CHECK_FALSE(r->truncated);
  auto cut = cl->complete("s", "u");
  REQUIRE(cut);
  CHECK(cut->truncated);
  CHECK(cut->finish_reason == "max_tokens");
  const Usage u = cl->usage();
  CHECK(u.input_tokens == 3010 + 7);
  CHECK(u.output_tokens == 50 + 4096);
  CHECK(u.cache_read_tokens == 2000);
  // cache writes at 1.25x and reads at 0.1x of the input price
  CHECK(u.cost == Approx(((10 + 7 + 1.25 * 1000 + 0.1 * 2000) * 3.0 + (50 + 4096) * 15.0) / 1e6));
}

TEST_CASE("timed-out requests count their prompt's tokens, and the token budget stops on them", "[llm][budget]") {
  Server s;
  for (int i = 0; i < 4; ++i) s.push({200, Server::openai_body("late"), {}, 1200});
  auto c = config(s);
  c.timeout_s = 0.2;
  c.retries = 0;
  c.token_budget = 1500;
  auto cl = client(c);
  const std::string prompt(4000, 'x');  // about 1,000 tokens
  CHECK_FALSE(cl->complete("", prompt));
  CHECK(cl->usage().estimated_tokens == 1000);
  CHECK(cl->budget_exhausted().empty());
  CHECK_FALSE(cl->complete("", prompt));
  CHECK(cl->usage().estimated_tokens == 2000);
  CHECK(cl->budget_exhausted().find("token budget") != std::string::npos);
  auto r = cl->complete("", prompt);
  REQUIRE_FALSE(r);
  CHECK(r.error().find("token budget") != std::string::npos);
  CHECK(s.requests().size() == 2);
}

TEST_CASE("max_completion_tokens and temperature, per model", "[llm][config]") {
  Server s;
  for (int i = 0; i < 3; ++i) s.push({200, Server::openai_body("x")});
  auto c = config(s);
  c.max_tokens = 1000;
  c.ensemble = {{"gpt-4.1", 1.0}, {"o3", 1.0}};
  llm::ModelOptions reasoning;
  reasoning.token_parameter = "max_completion_tokens";
  reasoning.send_temperature = 0;
  c.model_options["o3"] = reasoning;
  auto cl = client(c);
  REQUIRE(cl->complete("s", "u", "gpt-4.1"));
  REQUIRE(cl->complete("s", "u", RequestOptions{"o3", 3000}));
  const auto req = s.requests();
  CHECK(req[0].body.find("\"max_tokens\":1000") != std::string::npos);
  CHECK(req[0].body.find("\"temperature\":") != std::string::npos);
  CHECK(req[1].body.find("\"max_completion_tokens\":3000") != std::string::npos);
  CHECK(req[1].body.find("\"max_tokens\"") == std::string::npos);  // only that one
  CHECK(req[1].body.find("temperature") == std::string::npos);
  c.token_parameter = "max_output";
  CHECK(LlmClient::create(c).error().find("llm.token_parameter") != std::string::npos);
}

TEST_CASE("the journal keeps every request and its reply, used or not, with its request id and usage",
          "[llm][journal]") {
  Server s;
  s.push({429, "{\"error\":{\"message\":\"slow down\"}}", {{"retry-after-ms", "5"}}});
  s.push({200, Server::openai_tool_call(70, 9), {{"x-request-id", "req_abc"}}});
  s.push({401, Server::openai_error("Incorrect API key provided: sk-test-secret-42.", "invalid_request_error",
                                    "invalid_api_key")});
  auto c = config(s);
  c.journal =
      (std::filesystem::temp_directory_path() / ("kevolve-journal-" + std::to_string(getpid()) + ".jsonl")).string();
  std::filesystem::remove(c.journal);
  auto cl = client(c);
  REQUIRE(cl->complete("s", "u"));
  REQUIRE_FALSE(cl->complete("s", "u"));
  std::ifstream in(c.journal);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("\"status\":429,\"class\":\"transient\"") != std::string::npos);
  CHECK(lines[1].find("\"request_id\":\"req_abc\"") != std::string::npos);
  CHECK(lines[1].find("\"input_tokens\":70,\"output_tokens\":9") != std::string::npos);
  CHECK(lines[1].find("\"tool_call\":true") != std::string::npos);
  CHECK(lines[2].find("\"class\":\"permanent\"") != std::string::npos);
  CHECK(lines[2].find("Incorrect API key provided") != std::string::npos);
  CHECK(lines[2].find("sk-test-secret-42") == std::string::npos);
  std::filesystem::remove(c.journal);
}
