#include "runtime/llm/reply_parser.hpp"

#include <simdjson.h>

#include <string_view>
#include <vector>

#include "runtime/core/utf8.hpp"

namespace kevolve::llm {

namespace {

using simdjson::dom::element;
using J = simdjson::simdjson_result<element>;  // a value or the error of its lookup; lookups chain through errors

template <class E>  // an element or a lookup's result
bool get_string(const E& e, const char* key, std::string& out) {
  std::string_view sv;
  if (e[key].get(sv)) return false;
  out = std::string(sv);
  return true;
}

template <class E>
int64_t get_int(const E& e, const char* key) {
  int64_t n = 0;
  return e[key].get(n) ? 0 : n;
}

// OpenAI message content: a string, null, or a list of parts ({"type": "text"|"output_text", "text": "..."} or
// "text": {"value": "..."}), joined as they come. A refusal part is kept apart.
template <class E>
void read_content(const E& content, Completion& c) {
  std::string_view sv;
  if (!content.get(sv)) {
    c.text += std::string(sv);
    return;
  }
  simdjson::dom::array parts;
  if (content.get(parts)) return;  // null, or a shape without text
  for (element part : parts) {
    std::string type, text;
    get_string(part, "type", type);
    if (type == "refusal") {
      get_string(part, "refusal", c.refusal);
      continue;
    }
    if (type == "reasoning" || type == "thinking") {
      c.reasoning = true;
      continue;
    }
    if (!get_string(part, "text", text)) {
      element value;
      if (!part["text"].get(value)) get_string(value, "value", text);
    }
    if (!part.get(sv)) text = std::string(sv);  // a bare string part
    c.text += text;
  }
}

void read_openai_usage(element doc, Completion& c) {
  element u;
  if (doc["usage"].get(u)) return;
  c.input_tokens = get_int(u, "prompt_tokens");
  c.output_tokens = get_int(u, "completion_tokens");
  c.cache_read_tokens = get_int(u["prompt_tokens_details"], "cached_tokens");  // part of input
}

template <class E>
void read_anthropic_usage(const E& u, Completion& c) {
  element e;
  if (u.get(e)) return;
  if (int64_t n = get_int(u, "input_tokens")) c.input_tokens = n;
  if (int64_t n = get_int(u, "output_tokens")) c.output_tokens = n;
  if (int64_t n = get_int(u, "cache_creation_input_tokens")) c.cache_creation_tokens = n;
  if (int64_t n = get_int(u, "cache_read_input_tokens")) c.cache_read_tokens = n;
}

// One Anthropic content block: text joined to what came before exactly (no separator: a block boundary may
// fall inside a line); thinking is not the answer.
template <class E>
void read_block(const E& block, Completion& c) {
  std::string type, text;
  get_string(block, "type", type);
  if (type == "text" && get_string(block, "text", text)) c.text += text;
  if (type == "thinking" || type == "redacted_thinking") c.reasoning = true;
  if (type == "tool_use") c.tool_call = true;
}

template <class E>
bool has_reasoning(const E& msg) {
  std::string r;
  return (get_string(msg, "reasoning_content", r) && !r.empty()) || (get_string(msg, "reasoning", r) && !r.empty());
}

void finish_openai(Completion& c) {
  c.truncated = c.finish_reason == "length" || c.finish_reason == "max_tokens";
}

void finish_anthropic(Completion& c) {
  c.truncated = c.finish_reason == "max_tokens";
  c.input_tokens += c.cache_creation_tokens + c.cache_read_tokens;  // Anthropic counts them apart
}

// A server-sent event stream (`data: {...}` lines, `data: [DONE]`): the deltas joined into one reply.
Expected<Completion> parse_stream(const std::string& provider, const std::string& body, Completion c) {
  using R = Expected<Completion>;
  simdjson::dom::parser p;
  int events = 0;
  for (size_t pos = 0; pos < body.size();) {
    size_t eol = body.find('\n', pos);
    if (eol == std::string::npos) eol = body.size();
    std::string_view line(body.data() + pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("data:", 0) != 0) continue;
    line.remove_prefix(5);
    while (!line.empty() && (line.front() == ' ')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line == "[DONE]") continue;
    element ev;
    if (p.parse(line.data(), line.size()).get(ev)) return R::failure("the reply's event stream has an event that is not valid JSON");
    ++events;
    if (provider == "anthropic") {
      std::string type;
      get_string(ev, "type", type);
      element x;
      if (type == "message_start" && !ev["message"].get(x)) {
        get_string(x, "id", c.request_id);
        read_anthropic_usage(x["usage"], c);
      } else if (type == "content_block_start" && !ev["content_block"].get(x)) {
        read_block(x, c);
      } else if (type == "content_block_delta" && !ev["delta"].get(x)) {
        std::string dtype, text;
        get_string(x, "type", dtype);
        if (dtype == "text_delta" && get_string(x, "text", text)) c.text += text;
        if (dtype == "thinking_delta") c.reasoning = true;
      } else if (type == "message_delta") {
        if (!ev["delta"].get(x)) get_string(x, "stop_reason", c.finish_reason);
        if (!ev["usage"].get(x)) read_anthropic_usage(x, c);
      } else if (type == "error") {
        std::string msg;
        get_string(ev["error"], "message", msg);
        return R::failure("the provider's event stream ended with an error: " + msg);
      }
      continue;
    }
    std::string id;
    if (get_string(ev, "id", id)) c.request_id = id;
    simdjson::dom::array choices;
    if (!ev["choices"].get(choices) && choices.size() > 0) {
      J first = choices.at(0);
      element delta;
      if (!first["delta"].get(delta)) {
        read_content(delta["content"], c);
        if (has_reasoning(delta)) c.reasoning = true;
        simdjson::dom::array calls;
        if (!delta["tool_calls"].get(calls) && calls.size() > 0) c.tool_call = true;
      }
      std::string finish;
      if (get_string(first, "finish_reason", finish)) c.finish_reason = finish;
    }
    read_openai_usage(ev, c);
  }
  if (events == 0) return R::failure("the reply's event stream has no events");
  provider == "anthropic" ? finish_anthropic(c) : finish_openai(c);
  return c;
}

}  // namespace

Expected<Completion> parse_reply(const std::string& provider, std::string body) {
  using R = Expected<Completion>;
  Completion c;
  size_t bad = 0;
  if (!utf8::valid(body)) body = utf8::repair(body, &bad);
  bad += utf8::repair_json_surrogates(body);
  c.repaired = static_cast<int64_t>(bad);
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (body.compare(first, 5, "data:") == 0 || body.compare(first, 6, "event:") == 0))
    return parse_stream(provider, body, c);
  simdjson::dom::parser p;
  element doc;
  if (p.parse(body).get(doc) || !doc.is_object()) return R::failure("the reply is not valid JSON");
  get_string(doc, "id", c.request_id);
  element err;
  if (!doc["error"].get(err) && doc["choices"].error() && doc["content"].error()) {  // a 200 that is an error
    std::string msg;
    if (!get_string(err, "message", msg)) get_string(doc, "error", msg);
    return R::failure("the provider answered HTTP 200 with an error: " + (msg.empty() ? std::string("(no message)") : msg));
  }
  if (provider == "anthropic") {
    simdjson::dom::array content;
    if (doc["content"].get(content)) return R::failure("the reply has no content blocks");
    for (element block : content) read_block(block, c);
    get_string(doc, "stop_reason", c.finish_reason);
    read_anthropic_usage(doc["usage"], c);
    finish_anthropic(c);
    return c;
  }
  simdjson::dom::array choices;
  element msg;
  if (!doc["choices"].get(choices)) {
    if (choices.size() == 0) return R::failure("the reply has no choices");
    J first = choices.at(0);
    if (!first["message"].get(msg)) {
      read_content(msg["content"], c);
      get_string(msg, "refusal", c.refusal);
      c.reasoning = has_reasoning(msg);
      simdjson::dom::array calls;
      if (!msg["tool_calls"].get(calls) && calls.size() > 0) c.tool_call = true;
    } else {
      get_string(first, "text", c.text);  // the completions API's shape, which some servers answer with
    }
    get_string(first, "finish_reason", c.finish_reason);
    read_openai_usage(doc, c);
  } else if (!doc["message"].get(msg)) {  // Ollama's own /api/chat
    read_content(msg["content"], c);
    c.reasoning = has_reasoning(msg) || !msg["thinking"].error();
    get_string(doc, "done_reason", c.finish_reason);
    c.input_tokens = get_int(doc, "prompt_eval_count");
    c.output_tokens = get_int(doc, "eval_count");
  } else {
    return R::failure("the reply has no choices");
  }
  finish_openai(c);
  return c;
}

}  // namespace kevolve::llm
