// Replies that are valid but shaped otherwise than the plain OpenAI/Anthropic examples, against the local
// recording server: content as a list of parts, gzip and deflate bodies (a proxy's choice), bytes that are not
// UTF-8 and lone surrogate escapes, a streamed body, Ollama's own shape, a 200 that carries an error, and the
// request itself (Host with its port, stream false). Each must be read in one request, never retried.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "fake_llm_server.hpp"
#include "runtime/core/utf8.hpp"
#include "runtime/llm/journal.hpp"
#include "runtime/llm/llm_client.hpp"

using namespace kevolve;
using namespace kevolve::llm;
using Server = kevolve::test::FakeLlmServer;

namespace {

LlmConfig shapes_config(const Server& s, const std::string& provider = "openai") {
  LlmConfig c;
  c.provider = provider;
  c.endpoint = s.url(provider == "openai" ? "/v1/chat/completions" : "/v1/messages");
  c.model = "m";
  c.timeout_s = 5;
  c.retries = 3;
  c.backoff_s = 0.01;
  return c;
}

std::shared_ptr<LlmClient> shapes_client(const LlmConfig& c) {
  auto made = LlmClient::create(c);
  REQUIRE(made);
  return *made;
}

// `s` compressed by zlib: window bits 31 = gzip, 15 = zlib-wrapped deflate, -15 = raw deflate.
std::string compress(const std::string& s, int bits) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, s.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

const char* kCode = "```cpp\nextern \"C\" int kevolve_kernel(const kv_args* a) { return 0; }\n```";

}  // namespace

TEST_CASE("OpenAI content as a list of parts is read in one request", "[llm][replies]") {
  Server s;
  s.push({200,
          "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":["
          "{\"type\":\"text\",\"text\":\"```cpp\\nfloat y = float(1.\"},{\"type\":\"text\",\"text\":\"0 / s);\\n```\"}"
          "]},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":9}}"});
  s.push({200,
          "{\"id\":\"c2\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":["
          "{\"type\":\"refusal\",\"refusal\":\"I cannot help with that.\"}]},\"finish_reason\":\"stop\"}]}"});
  auto cl = shapes_client(shapes_config(s));
  auto r = cl->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "```cpp\nfloat y = float(1.0 / s);\n```");
  CHECK(r->output_tokens == 9);
  auto refused = cl->complete("s", "u");
  REQUIRE(refused);
  CHECK(refused->text.empty());
  CHECK(refused->refusal == "I cannot help with that.");
  CHECK(s.requests().size() == 2);
}

TEST_CASE("Anthropic blocks split inside a line are joined exactly", "[llm][replies]") {
  Server s;
  s.push({200, Server::anthropic_blocks({{"text", "```cpp\nfloat y = float(1."}, {"text", "0 / s);\n```"}},
                                        "end_turn", 10, 5)});
  auto r = shapes_client(shapes_config(s, "anthropic"))->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "```cpp\nfloat y = float(1.0 / s);\n```");
}

TEST_CASE("gzip and deflate bodies are decoded whatever was asked and a coding it cannot read is said once",
          "[llm][replies]") {
  Server s;
  const std::string body = Server::openai_body(kCode, 30, 12);
  s.push({200, compress(body, 31), {{"Content-Encoding", "gzip"}}});
  s.push({200, compress(body, 15), {{"Content-Encoding", "deflate"}}});
  s.push({200, compress(body, -15), {{"Content-Encoding", "deflate"}}});  // raw deflate, as some servers send it
  s.push({200, "\x1b\x2c\x00\x00", {{"Content-Encoding", "br"}}});
  auto cl = shapes_client(shapes_config(s));
  for (int i = 0; i < 3; ++i) {
    auto r = cl->complete("s", "u");
    REQUIRE(r);
    CHECK(r->text == kCode);
    CHECK(r->input_tokens == 30);
  }
  CHECK(s.requests().at(0).headers.at("accept-encoding") == "gzip, deflate");
  auto br = cl->complete("s", "u");
  REQUIRE_FALSE(br);
  CHECK(br.error().find("'br'") != std::string::npos);
  CHECK(s.requests().size() == 4);  // the br reply is not asked again: the next answer would be br too
  CHECK(cl->usage().requests == 4);
}

TEST_CASE("a gzip body cut short is an error of its own and retried", "[llm][replies]") {
  Server s;
  const std::string z = compress(Server::openai_body(std::string(5000, 'k')), 31);
  s.push({200, z.substr(0, z.size() / 2), {{"Content-Encoding", "gzip"}}});
  s.push({200, Server::openai_body("fine")});
  auto cl = shapes_client(shapes_config(s));
  auto r = cl->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "fine");
  CHECK(cl->usage().retries == 1);
}

TEST_CASE("one byte that is not UTF-8 or a lone surrogate is replaced where it lies and the journal stays JSON",
          "[llm][replies][journal]") {
  Server s;
  const std::string bad_byte = "{\"id\":\"u1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                               "\"```cpp\\n// caf\xE9 \\nint x = 1;\\n```\"},\"finish_reason\":\"stop\"}],"
                               "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}";
  const std::string lone = "{\"id\":\"u2\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                           "\"```cpp\\n// \\ud800 mark\\nint y = 2;\\n```\"},\"finish_reason\":\"stop\"}]}";
  s.push({200, bad_byte});
  s.push({200, lone});
  s.push({200, "not json at all \xFF\xFE"});
  s.push({200, Server::openai_body("after")});
  auto c = shapes_config(s);
  c.journal = (std::filesystem::temp_directory_path() / ("kevolve-utf8-" + std::to_string(getpid()) + ".jsonl")).string();
  std::filesystem::remove(c.journal);
  auto cl = shapes_client(c);
  auto r = cl->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "```cpp\n// caf\xEF\xBF\xBD \nint x = 1;\n```");
  CHECK(r->repaired == 1);
  auto r2 = cl->complete("s", "u");
  REQUIRE(r2);
  CHECK(r2->text == "```cpp\n// \xEF\xBF\xBD mark\nint y = 2;\n```");
  auto r3 = cl->complete("s", "u");  // the unreadable body, then the next reply
  REQUIRE(r3);
  CHECK(r3->text == "after");
  CHECK(s.requests().size() == 4);
  std::ifstream in(c.journal);
  int lines = 0;
  for (std::string l; std::getline(in, l); ++lines) CHECK(utf8::valid(l));
  CHECK(lines == 4);
  auto journal = read_journal(c.journal, "");
  REQUIRE(journal);
  REQUIRE(journal->size() == 4);
  CHECK((*journal)[0].text.find("caf\xEF\xBF\xBD") != std::string::npos);
  CHECK((*journal)[2].error.find("base64") != std::string::npos);
  std::filesystem::remove(c.journal);
}

TEST_CASE("a streamed reply from a proxy is joined from its deltas for both providers", "[llm][replies]") {
  Server s;
  s.push({200,
          "data: {\"id\":\"s1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
          "data: {\"id\":\"s1\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"
          "data: {\"id\":\"s1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"```cpp\\nint \"}}]}\n\n"
          "data: {\"id\":\"s1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"z;\\n```\"},\"finish_reason\":\"length\"}]}\n\n"
          "data: {\"id\":\"s1\",\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":8}}\n\n"
          "data: [DONE]\n\n",
          {{"Content-Type", "text/event-stream"}}});
  auto r = shapes_client(shapes_config(s))->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "```cpp\nint z;\n```");
  CHECK(r->reasoning);
  CHECK(r->truncated);
  CHECK(r->input_tokens == 40);
  CHECK(r->output_tokens == 8);

  Server a;
  a.push({200,
          "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_9\",\"usage\":{\"input_tokens\":"
          "12,\"output_tokens\":1}}}\n\n"
          "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
          "\"text\",\"text\":\"\"}}\n\n"
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
          "\"text_delta\",\"text\":\"float(1.\"}}\n\n"
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
          "\"text_delta\",\"text\":\"0 / s)\"}}\n\n"
          "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":"
          "{\"output_tokens\":6}}\n\n"
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
          {{"Content-Type", "text/event-stream"}}});
  auto ra = shapes_client(shapes_config(a, "anthropic"))->complete("s", "u");
  REQUIRE(ra);
  CHECK(ra->text == "float(1.0 / s)");
  CHECK(ra->request_id == "msg_9");
  CHECK(ra->input_tokens == 12);
  CHECK(ra->output_tokens == 6);
  CHECK(ra->finish_reason == "end_turn");
}

TEST_CASE("Ollama's own chat reply and the legacy text field are read", "[llm][replies]") {
  Server s;
  s.push({200, "{\"model\":\"qwen\",\"created_at\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"assistant\","
               "\"content\":\"hello\"},\"done\":true,\"done_reason\":\"length\",\"prompt_eval_count\":21,"
               "\"eval_count\":64}"});
  s.push({200, "{\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"text\":\"legacy\",\"finish_reason\":\"stop\"}]}"});
  auto cl = shapes_client(shapes_config(s));
  auto r = cl->complete("s", "u");
  REQUIRE(r);
  CHECK(r->text == "hello");
  CHECK(r->truncated);
  CHECK(r->input_tokens == 21);
  CHECK(r->output_tokens == 64);
  auto l = cl->complete("s", "u");
  REQUIRE(l);
  CHECK(l->text == "legacy");
}

TEST_CASE("an HTTP 200 that carries an error names the provider's message and is retried", "[llm][replies]") {
  Server s;
  s.push({200, "{\"error\":{\"message\":\"upstream model overloaded\",\"code\":502}}"});
  s.push({200, "{\"error\":{\"message\":\"upstream model overloaded\",\"code\":502}}"});
  auto c = shapes_config(s);
  c.retries = 1;
  auto r = shapes_client(c)->complete("s", "u");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("HTTP 200 with an error: upstream model overloaded") != std::string::npos);
  CHECK(s.requests().size() == 2);
}

TEST_CASE("the request names the port in Host and asks for no stream", "[llm][replies]") {
  Server s;
  s.push({200, Server::openai_body("x")});
  REQUIRE(shapes_client(shapes_config(s))->complete("s", "u"));
  const auto req = s.requests().at(0);
  CHECK(req.headers.at("host") == "127.0.0.1:" + std::to_string(s.port()));
  CHECK(req.body.find("\"stream\":false") != std::string::npos);
}
