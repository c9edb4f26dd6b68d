#include "runtime/llm/llm_client.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "runtime/core/json.hpp"
#include "runtime/core/utf8.hpp"
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
  // stream false said outright: Ollama's own /api/chat streams unless told not to.
  std::string b = "{\"model\":" + quote(model) + ",\"stream\":false,\"" + tokens + "\":" + std::to_string(max_tokens);
  if (o.send_temperature) b += ",\"temperature\":" + number(o.temperature);
  if (c_.provider == "anthropic")
    return b + ",\"system\":" + quote(system) + ",\"messages\":[{\"role\":\"user\",\"content\":" + quote(user) + "}]}";
  return b + ",\"messages\":[{\"role\":\"system\",\"content\":" + quote(system) +
         "},{\"role\":\"user\",\"content\":" + quote(user) + "}]}";
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
                       int64_t estimated, const std::string& error, const std::string& raw) const {
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
            ",\"tool_call\":" + (c->tool_call ? "true" : "false") +
            (c->repaired ? ",\"repaired\":" + std::to_string(c->repaired) : std::string());
  if (estimated) line += ",\"estimated_tokens\":" + std::to_string(estimated);
  if (!error.empty()) line += ",\"error\":" + quote(redact(error));
  // The start of a body that could not be read: as text when it is UTF-8, else as base64 (the line stays JSON).
  if (!raw.empty())
    line += utf8::valid(raw) ? ",\"body\":" + quote(redact(raw)) : ",\"body_base64\":" + quote(utf8::base64(redact(raw)));
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
      auto c = parse_reply(c_.provider, r->body);
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
      record(model, attempt + 1, 200, "transient", nullptr, estimate, last_error, r->body.substr(0, 2000));
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
    if (attempt < c_.retries) pause(backoff(attempt, asked), last_error);
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

void LlmClient::pause(double seconds, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    backoff_why_ = redact(why.substr(0, 160));
  }
  gate_.back_off(seconds);
}

LiveState LlmClient::live() const {
  LiveState s;
  const ProviderGate::State g = gate_.state();
  s.in_flight = g.in_flight;
  s.waiting = g.waiting;
  const double left = std::chrono::duration<double>(g.backoff_until - ProviderGate::Clock::now()).count();
  std::lock_guard<std::mutex> lock(mu_);
  if (left > 0) {
    s.backoff_left_s = left;
    s.backoff_until = std::time(nullptr) + static_cast<std::time_t>(std::ceil(left));
    s.backoff_why = backoff_why_;
  }
  s.usage = usage_;
  return s;
}

std::string describe_live(const LiveState& s, bool priced) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "LLM %d in flight, %d waiting", s.in_flight, s.waiting);
  if (s.backoff_left_s > 0) {
    char when[16] = "?";
    if (std::tm tm{}; gmtime_r(&s.backoff_until, &tm)) std::strftime(when, sizeof when, "%H:%M:%S", &tm);
    n += std::snprintf(buf + n, sizeof buf - n, " | provider back-off until %s UTC (%.0f s left%s%s)", when,
                       std::ceil(s.backoff_left_s), s.backoff_why.empty() ? "" : ": ", s.backoff_why.c_str());
  }
  if (n > 0 && static_cast<size_t>(n) < sizeof buf)
    n += std::snprintf(buf + n, sizeof buf - n, " | %lld tokens", static_cast<long long>(s.usage.total_tokens()));
  if (priced && n > 0 && static_cast<size_t>(n) < sizeof buf)
    std::snprintf(buf + n, sizeof buf - n, ", cost %.4g", s.usage.cost);
  return buf;
}

Usage LlmClient::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

}  // namespace kevolve::llm
