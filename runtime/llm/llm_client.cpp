#include "runtime/llm/llm_client.hpp"

#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "runtime/core/json.hpp"
#include "runtime/llm/error_policy.hpp"

namespace kevolve::llm {

ModelOptions LlmConfig::options_for(const std::string& m) const {
  ModelOptions o;
  if (auto it = model_options.find(m); it != model_options.end()) o = it->second;
  if (o.token_parameter.empty()) o.token_parameter = token_parameter;
  if (o.send_temperature < 0) o.send_temperature = send_temperature ? 1 : 0;
  if (o.temperature < 0) o.temperature = temperature;
  return o;
}

Expected<std::shared_ptr<LlmClient>> LlmClient::create(const LlmConfig& c) {
  using R = Expected<std::shared_ptr<LlmClient>>;
  if (c.provider != "openai" && c.provider != "anthropic")
    return R::failure("llm.provider: '" + c.provider + "' (expected openai or anthropic)");
  if (c.model.empty() && c.ensemble.empty())
    return R::failure("llm.model: missing (expected the model name the endpoint serves)");
  for (auto& [m, w] : c.ensemble)
    if (m.empty() || !(w > 0)) return R::failure("llm.models: every entry needs a name and a weight > 0");
  if (c.token_parameter != "max_tokens" && c.token_parameter != "max_completion_tokens")
    return R::failure("llm.token_parameter: '" + c.token_parameter +
                      "' (expected max_tokens or max_completion_tokens)");
  for (auto& [m, o] : c.model_options)
    if (!o.token_parameter.empty() && o.token_parameter != "max_tokens" && o.token_parameter != "max_completion_tokens")
      return R::failure("llm.models: " + m + ": token_parameter '" + o.token_parameter +
                        "' (expected max_tokens or max_completion_tokens)");
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

int LlmClient::max_tokens_for(const std::string&) const { return c_.max_tokens; }

std::string LlmClient::request_body(const std::string& model, const std::string& system, const std::string& user,
                                    int max_tokens) const {
  using json::number;
  using json::quote;
  const ModelOptions o = c_.options_for(model);
  // Anthropic's Messages API knows only max_tokens; OpenAI's reasoning models only max_completion_tokens.
  const std::string tokens = c_.provider == "anthropic" ? "max_tokens" : o.token_parameter;
  std::string b = "{\"model\":" + quote(model) + ",\"" + tokens + "\":" + std::to_string(max_tokens);
  if (o.send_temperature) b += ",\"temperature\":" + number(o.temperature);
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
  std::string_view sv;
  if (!doc["id"].get(sv)) c.request_id = std::string(sv);
  int64_t n = 0;
  if (c_.provider == "anthropic") {
    simdjson::dom::array content;
    if (doc["content"].get(content)) return R::failure("the reply has no content blocks");
    for (auto block : content) {  // text blocks joined by a newline; thinking blocks are not the answer
      std::string_view type, text;
      if (block["type"].get(type)) continue;
      if (type == "text" && !block["text"].get(text)) c.text += (c.text.empty() ? "" : "\n") + std::string(text);
      if (type == "tool_use") c.tool_call = true;
    }
    if (!doc["stop_reason"].get(sv)) c.finish_reason = std::string(sv);
    c.truncated = c.finish_reason == "max_tokens";
    if (!doc["usage"]["input_tokens"].get(n)) c.input_tokens = n;
    if (!doc["usage"]["output_tokens"].get(n)) c.output_tokens = n;
    if (!doc["usage"]["cache_creation_input_tokens"].get(n)) c.cache_creation_tokens = n;
    if (!doc["usage"]["cache_read_input_tokens"].get(n)) c.cache_read_tokens = n;
    c.input_tokens += c.cache_creation_tokens + c.cache_read_tokens;  // Anthropic counts them apart
  } else {
    simdjson::dom::array choices;
    if (doc["choices"].get(choices) || choices.size() == 0) return R::failure("the reply has no choices");
    auto first = choices.at(0);
    if (first.error()) return R::failure("the reply has no choices");
    auto msg = first["message"];
    if (!msg["content"].get(sv)) c.text = std::string(sv);  // null content: no text (reasoning_content is not it)
    simdjson::dom::array calls;
    if (!msg["tool_calls"].get(calls) && calls.size() > 0) c.tool_call = true;
    if (!first["finish_reason"].get(sv)) c.finish_reason = std::string(sv);
    c.truncated = c.finish_reason == "length";
    if (!doc["usage"]["prompt_tokens"].get(n)) c.input_tokens = n;
    if (!doc["usage"]["completion_tokens"].get(n)) c.output_tokens = n;
    if (!doc["usage"]["prompt_tokens_details"]["cached_tokens"].get(n)) c.cache_read_tokens = n;  // part of input
  }
  return c;
}

void LlmClient::count(const Completion& c) {
  std::lock_guard<std::mutex> lock(mu_);
  usage_.input_tokens += c.input_tokens;
  usage_.output_tokens += c.output_tokens;
  usage_.cache_creation_tokens += c.cache_creation_tokens;
  usage_.cache_read_tokens += c.cache_read_tokens;
  usage_.truncated += c.truncated;
  usage_.tool_calls += c.tool_call;
  // Anthropic bills cache writes at 1.25x and cache reads at 0.1x of the input price.
  double in = static_cast<double>(c.input_tokens);
  if (c_.provider == "anthropic")
    in += -static_cast<double>(c.cache_creation_tokens + c.cache_read_tokens) + 1.25 * c.cache_creation_tokens +
          0.1 * c.cache_read_tokens;
  usage_.cost += (in * c_.cost_per_mtok_in + c.output_tokens * c_.cost_per_mtok_out) / 1e6;
}

void LlmClient::record(const std::string& model, int attempt, int status, const std::string& cls, const Completion* c,
                       int64_t estimated, const std::string& error) const {
  if (c_.journal.empty()) return;
  using json::quote;
  std::string line = "{\"time\":" + std::to_string(std::time(nullptr)) +
                     (c_.search.empty() ? std::string() : ",\"search\":" + quote(c_.search)) +
                     ",\"model\":" + quote(model) + ",\"attempt\":" + std::to_string(attempt) +
                     ",\"status\":" + std::to_string(status) + ",\"class\":" + quote(cls);
  if (c)
    line += ",\"request_id\":" + quote(c->request_id) + ",\"finish_reason\":" + quote(c->finish_reason) +
            ",\"input_tokens\":" + std::to_string(c->input_tokens) +
            ",\"output_tokens\":" + std::to_string(c->output_tokens) +
            ",\"cache_creation_tokens\":" + std::to_string(c->cache_creation_tokens) +
            ",\"cache_read_tokens\":" + std::to_string(c->cache_read_tokens) +
            ",\"truncated\":" + (c->truncated ? "true" : "false") +
            ",\"tool_call\":" + (c->tool_call ? "true" : "false");
  if (estimated) line += ",\"estimated_tokens\":" + std::to_string(estimated);
  if (!error.empty()) line += ",\"error\":" + quote(redact(error));
  if (c && !c->journal_ref.empty()) line += ",\"ref\":" + quote(c->journal_ref);
  if (c) line += ",\"text\":" + quote(redact(c->text));
  std::lock_guard<std::mutex> lock(journal_mu_);
  std::ofstream(c_.journal, std::ios::app) << line << "}\n";
}

std::string LlmClient::budget_exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!permanent_.empty()) return permanent_;
  if (c_.token_budget > 0 && usage_.total_tokens() >= c_.token_budget)
    return "LLM token budget of " + std::to_string(c_.token_budget) + " used up (" +
           std::to_string(usage_.total_tokens()) + " tokens spent)";
  if (c_.cost_budget > 0 && usage_.cost >= c_.cost_budget)
    return "LLM cost budget of " + std::to_string(c_.cost_budget) + " used up";
  return {};
}

std::string LlmClient::permanent_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return permanent_;
}

void LlmClient::journal_outcome(const Completion& c, const std::string& outcome) const {
  if (c_.journal.empty() || c.journal_ref.empty()) return;
  std::string line = "{\"time\":" + std::to_string(std::time(nullptr)) +
                     (c_.search.empty() ? std::string() : ",\"search\":" + json::quote(c_.search)) +
                     ",\"ref\":" + json::quote(c.journal_ref) + ",\"outcome\":" + json::quote(redact(outcome));
  std::lock_guard<std::mutex> lock(journal_mu_);
  std::ofstream(c_.journal, std::ios::app) << line << "}\n";
}

double LlmClient::backoff(int attempt, double asked) {
  double wait = asked >= 0 ? asked : c_.backoff_s * std::pow(2.0, attempt);
  std::lock_guard<std::mutex> lock(mu_);
  wait *= 1.0 + std::uniform_real_distribution<double>(0, 0.2)(jitter_);  // jitter only lengthens a wait
  return std::min(wait, c_.max_backoff_s);
}

Expected<Completion> LlmClient::complete(const std::string& system, const std::string& user, const std::string& model) {
  return complete(system, user, RequestOptions{model, 0});
}

Expected<Completion> LlmClient::complete(const std::string& system, const std::string& user, const RequestOptions& o) {
  using R = Expected<Completion>;
  if (auto why = budget_exhausted(); !why.empty()) return R::failure(why);
  std::map<std::string, std::string> headers;
  if (c_.provider == "anthropic") {
    headers["anthropic-version"] = "2023-06-01";
    if (!key_.empty()) headers["x-api-key"] = key_;
  } else if (!key_.empty()) {
    headers["authorization"] = "Bearer " + key_;
  }
  const std::string model = o.model.empty() ? c_.model : o.model;
  const std::string body = request_body(model, system, user, o.max_tokens > 0 ? o.max_tokens : max_tokens_for(model));
  const int64_t estimate = static_cast<int64_t>(system.size() + user.size()) / 4;  // ~4 characters a token
  std::string last_error;
  for (int attempt = 0; attempt <= c_.retries; ++attempt) {
    gate_.enter();  // waits out a back-off any request set, and the concurrency and per-minute limits
    if (auto why = budget_exhausted(); !why.empty()) {
      gate_.leave();
      return R::failure(why);  // another request hit a permanent error or spent the budget meanwhile
    }
    auto r = http_post(url_, headers, body, c_.timeout_s, c_.ca_file);
    gate_.leave();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++usage_.requests;
      if (attempt > 0) ++usage_.retries;
      // Sent but no usage came back: the provider still processed (and bills) the prompt.
      if ((!r && (r.code() == Errc::timeout || r.code() == Errc::io))) usage_.estimated_tokens += estimate;
    }
    double asked = -1;
    const bool estimated = !r && (r.code() == Errc::timeout || r.code() == Errc::io);
    if (!r) record(model, attempt + 1, 0, "transport", nullptr, estimated ? estimate : 0, r.error());
    if (!r) {
      if (r.code() == Errc::invalid_argument) {  // our own configuration (ca_file): no retry helps
        std::lock_guard<std::mutex> lock(mu_);
        ++usage_.failures;
        return R::failure(r.status());
      }
      last_error = r.error();
    } else if (r->status == 200) {
      auto c = parse(r->body);
      if (c) {
        c->attempts = attempt + 1;
        for (const char* h : {"x-request-id", "request-id"})
          if (auto it = r->headers.find(h); it != r->headers.end()) c->request_id = it->second;
        count(*c);
        if (!c_.journal.empty()) c->journal_ref = journal_tag_ + "-" + std::to_string(++journal_seq_);
        record(model, attempt + 1, 200, "ok", &*c, 0, "");
        return c;
      }
      last_error = "malformed reply: " + c.error();
      record(model, attempt + 1, 200, "transient", nullptr, estimate, last_error + ": " + r->body.substr(0, 2000));
      std::lock_guard<std::mutex> lock(mu_);
      usage_.estimated_tokens += estimate;
    } else {
      const HttpVerdict v = classify_http(r->status, r->headers, r->body);
      record(model, attempt + 1, r->status, v.cls == ErrorClass::permanent ? "permanent" : "transient", nullptr, 0,
             v.reason);
      if (v.cls == ErrorClass::permanent) {
        std::lock_guard<std::mutex> lock(mu_);
        ++usage_.failures;
        permanent_ = redact("the LLM provider refused the request (" + v.reason + " from " + url_.host + ")");
        return R::failure(permanent_);  // never retried, and no later request is sent
      }
      last_error = v.reason;
      asked = v.retry_after_s;
    }
    if (attempt < c_.retries) gate_.back_off(backoff(attempt, asked));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++usage_.failures;
  return R::failure(Errc::unavailable, redact("no usable reply from " + url_.host + ":" + url_.port + " after " +
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
