// Reading a provider's HTTP 200 body into one Completion, for every shape the OpenAI and Anthropic APIs and the
// common servers (vLLM, SGLang, llama.cpp, Ollama, LiteLLM and other proxies) send: message content as a string
// or as a list of parts, the legacy `text` field, Ollama's own /api/chat object, a server-sent event stream
// (a proxy that streamed whatever was asked) with its deltas, Anthropic content blocks joined exactly as the
// provider split them. Bytes that are not UTF-8 and lone UTF-16 surrogate escapes are replaced by U+FFFD where
// they lie; the rest of the reply is kept. simdjson stays inside reply_parser.cpp.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::llm {

// One reply as the provider gave it; `text` is the answer without any reasoning (reasoning_content, thinking
// blocks). A reply may be unusable yet paid for: cut at the token limit, a tool call, or no text.
struct Completion {
  std::string text;
  std::string finish_reason;  // as the provider names it (stop, length, end_turn, max_tokens, tool_calls, ...)
  bool truncated = false;     // cut at the output token limit
  bool tool_call = false;     // the model called a tool instead of answering in text
  bool reasoning = false;     // the reply carried reasoning (reasoning_content, thinking blocks) beside `text`
  std::string refusal;        // the model's refusal message (OpenAI `refusal`), "" when none
  int64_t repaired = 0;       // bytes or escapes that were not valid text, replaced by U+FFFD
  std::string request_id;     // the provider's id of the request (header or body), "" when none
  std::string journal_ref;    // this reply's line in the journal (unique per journal), "" without a journal
  int64_t input_tokens = 0, output_tokens = 0;  // input_tokens includes the cache tokens below
  int64_t cache_creation_tokens = 0, cache_read_tokens = 0;
  int attempts = 0;
};

// `provider` is "openai" (every OpenAI-compatible server) or "anthropic". Errors say what the body lacks
// ("the reply is not valid JSON", "the reply has no choices", "the provider answered HTTP 200 with an error: ...").
Expected<Completion> parse_reply(const std::string& provider, std::string body);

}  // namespace kevolve::llm
