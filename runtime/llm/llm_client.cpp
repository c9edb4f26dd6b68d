#include "runtime/llm/llm_client.hpp"

#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "runtime/core/json.hpp"

namespace kevolve::llm {

Expected<std::shared_ptr<LlmClient>> LlmClient::create(const LlmConfig& c) {
  using R = Expected<std::shared_ptr<LlmClient>>;
  if (c.provider != "openai" && c.provider != "anthropic")
    return R::failure("llm.provider: '" + c.provider + "' (expected openai or anthropic)");
  if (c.model.empty() && c.ensemble.empty())
    return R::failure("llm.model: missing (expected the model name the endpoint serves)");
  for (auto& [m, w] : c.ensemble)
    if (m.empty() || !(w > 0)) return R::failure("llm.models: every entry needs a name and a weight > 0");
  auto url = parse_url(c.endpoint);
  if (!url) return R::failure("llm.endpoint: " + url.error());
  std::string key;
  if (!c.api_key_env.empty()) {
    const char* k = std::getenv(c.api_key_env.c_str());
    if (!k || !*k)
      return R::failure("llm.api_key_env: the environment variable " + c.api_key_env +
                        " is not set (it must hold the API key)");
    key = k;
  }
  return R(std::shared_ptr<LlmClient>(new LlmClient(c, *url, key)));
}

std::string LlmClient::request_body(const std::string& model, const std::string& system,
                                    const std::string& user) const {
  using json::number;
  using json::quote;
  std::string b = "{\"model\":" + quote(model) + ",\"max_tokens\":" + std::to_string(c_.max_tokens) +
                  ",\"temperature\":" + number(c_.temperature);
  if (c_.provider == "anthropic")
    return b + ",\"system\":" + quote(system) + ",\"messages\":[{\"role\":\"user\",\"content\":" + quote(user) + "}]}";
  return b + ",\"messages\":[{\"role\":\"system\",\"content\":" + quote(system) +
         "},{\"role\":\"user\",\"content\":" + quote(user) + "}]}";
}

Expected<Completion> LlmClient::parse(const std::string& body) const {
  using R = Expected<Completion>;
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (p.parse(body).get(doc)) return R::failure("the reply is not valid JSON");
  Completion c;
  if (c_.provider == "anthropic") {
    simdjson::dom::array content;
    if (doc["content"].get(content) || content.size() == 0) return R::failure("the reply has no content blocks");
    for (auto block : content) {
      std::string_view type, text;
      if (!block["type"].get(type) && type == "text" && !block["text"].get(text)) c.text += std::string(text);
    }
    int64_t in = 0, out = 0;
    if (!doc["usage"]["input_tokens"].get(in)) c.input_tokens = in;
    if (!doc["usage"]["output_tokens"].get(out)) c.output_tokens = out;
  } else {
    simdjson::dom::array choices;
    if (doc["choices"].get(choices) || choices.size() == 0) return R::failure("the reply has no choices");
    std::string_view text;
    if (choices.at(0)["message"]["content"].get(text))
      return R::failure("the reply's first choice has no message content");
    c.text = std::string(text);
    int64_t in = 0, out = 0;
    if (!doc["usage"]["prompt_tokens"].get(in)) c.input_tokens = in;
    if (!doc["usage"]["completion_tokens"].get(out)) c.output_tokens = out;
  }
  if (c.text.empty()) return R::failure("the reply's text is empty");
  return c;
}

std::string LlmClient::budget_exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (c_.token_budget > 0 && usage_.input_tokens + usage_.output_tokens >= c_.token_budget)
    return "LLM token budget of " + std::to_string(c_.token_budget) + " used up";
  if (c_.cost_budget > 0 && usage_.cost >= c_.cost_budget)
    return "LLM cost budget of " + std::to_string(c_.cost_budget) + " used up";
  return {};
}

Expected<Completion> LlmClient::complete(const std::string& system, const std::string& user, const std::string& model) {
  if (auto why = budget_exhausted(); !why.empty()) return Expected<Completion>::failure(why);
  std::map<std::string, std::string> headers;
  if (c_.provider == "anthropic") {
    headers["anthropic-version"] = "2023-06-01";
    if (!key_.empty()) headers["x-api-key"] = key_;
  } else if (!key_.empty()) {
    headers["authorization"] = "Bearer " + key_;
  }
  const std::string body = request_body(model.empty() ? c_.model : model, system, user);
  std::string last_error;
  for (int attempt = 0; attempt <= c_.retries; ++attempt) {
    double wait = std::min(60.0, c_.backoff_s * std::pow(2.0, attempt));
    auto r = http_post(url_, headers, body, c_.timeout_s, c_.ca_file);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++usage_.requests;
    }
    if (!r) {
      last_error = r.error();
    } else if (r->status == 429 || r->status >= 500) {
      last_error = "HTTP " + std::to_string(r->status) + (r->status == 429 ? " (rate limited)" : " (server error)");
      if (auto it = r->headers.find("retry-after"); it != r->headers.end()) {
        char* end = nullptr;
        const double s = std::strtod(it->second.c_str(), &end);
        if (end != it->second.c_str() && s >= 0) wait = std::min(s, 300.0);
      }
    } else if (r->status != 200) {
      std::lock_guard<std::mutex> lock(mu_);
      ++usage_.failures;
      return Expected<Completion>::failure(redact("HTTP " + std::to_string(r->status) + " from " + url_.host + ": " +
                                                  r->body.substr(0, 300)));  // client errors are not retried
    } else if (auto c = parse(r->body); c) {
      std::lock_guard<std::mutex> lock(mu_);
      c->attempts = attempt + 1;
      usage_.input_tokens += c->input_tokens;
      usage_.output_tokens += c->output_tokens;
      usage_.cost += (c->input_tokens * c_.cost_per_mtok_in + c->output_tokens * c_.cost_per_mtok_out) / 1e6;
      return c;
    } else {
      last_error = "malformed reply: " + c.error();
    }
    if (attempt < c_.retries) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++usage_.failures;
  return Expected<Completion>::failure(redact("no usable reply from " + url_.host + ":" + url_.port + " after " +
                                              std::to_string(c_.retries + 1) + " attempts; last: " + last_error));
}

std::string LlmClient::redact(std::string text) const {
  if (key_.empty()) return text;
  for (size_t pos; (pos = text.find(key_)) != std::string::npos;) text.replace(pos, key_.size(), "[api key]");
  return text;
}

Usage LlmClient::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

}  // namespace kevolve::llm
