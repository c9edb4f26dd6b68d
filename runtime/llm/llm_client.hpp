// LlmClient: chat completions from a user's endpoint — OpenAI-compatible (OpenAI, vLLM, SGLang, llama.cpp
// server, Ollama) or Anthropic Messages — with timeouts, error classes with their policies
// (error_policy.hpp: transient answers retried after one back-off shared by all requests, honouring the
// provider's retry-after; permanent ones stop every further request), and token/cost accounting of every
// request sent, whether its reply was used or not. The API key is read from the environment variable the
// config names and is never logged or put in an error message.
#pragma once
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/llm/http_client.hpp"
#include "runtime/llm/provider_gate.hpp"
#include "runtime/llm/reply_parser.hpp"

namespace kevolve::llm {

// How one model is asked: reasoning models reject `max_tokens` (they take `max_completion_tokens`) and any
// temperature but their own.
struct ModelOptions {
  std::string token_parameter;  // "max_tokens" | "max_completion_tokens"; "" = the config's
  int send_temperature = -1;    // 1 = send it, 0 = leave it out, -1 = the config's
  double temperature = -1;      // < 0 = the config's
};

struct LlmConfig {
  std::string provider = "openai";  // openai | anthropic
  std::string endpoint;             // full URL, e.g. http://127.0.0.1:8000/v1/chat/completions
  std::string model;
  std::vector<std::pair<std::string, double>> ensemble;  // several models with weights; empty = `model` alone
  std::map<std::string, ModelOptions> model_options;     // per model name (ensemble entries, or `model`)
  std::string api_key_env;                               // name of the environment variable holding the key ("" = none)
  std::string ca_file;  // HTTPS: PEM file of CAs to trust instead of the system's ("" = system)
  double temperature = 0.7;
  bool send_temperature = true;
  std::string token_parameter = "max_tokens";  // OpenAI-compatible only: or "max_completion_tokens"
  int max_tokens = 4096;
  int max_tokens_limit = 0;  // the most a cut reply may raise max_tokens to; 0 = 4 x max_tokens
  double timeout_s = 120;
  int retries = 4;                                     // extra attempts after the first, for transient errors
  double backoff_s = 1.0;                              // first back-off; doubles each retry, capped at max_backoff_s
  double max_backoff_s = 300;                          // also caps what a provider's retry-after may ask for
  int concurrency = 0;                                 // requests in flight at once (0 = no limit here)
  double requests_per_minute = 0;                      // 0 = no limit
  double cost_per_mtok_in = 0, cost_per_mtok_out = 0;  // for the cost figure
  int64_t token_budget = 0;  // every token of every request (input, cache, output, estimates); 0 = no limit
  double cost_budget = 0;    // in the cost unit above; 0 = no limit
  // The operator's circuit breaker: proposals in a row that got no usable reply (replies that could not be
  // used even after the adjusted prompt, or every retry spent) before the search stops; 0 = never.
  int breaker = 4;
  // Every request and its reply (used or not) appended as one JSON line: time, search, model, attempt, HTTP
  // status, error class, request id, finish reason, tokens, error, reply text. "" = none.
  std::string journal;
  std::string search;  // the search the requests are for, named on each journal line ("" = not named)
  // How many of the search's best kernels the operator shows with their code in a child prompt.
  int best_k = 3;
  ModelOptions options_for(const std::string& model) const;
};

struct Usage {
  int64_t requests = 0;                         // HTTP requests sent (every attempt)
  int64_t failures = 0;                         // complete() calls that returned no reply
  int64_t retries = 0;                          // attempts after a transient failure
  int64_t input_tokens = 0, output_tokens = 0;  // as the providers reported them (input includes cache tokens)
  int64_t cache_creation_tokens = 0, cache_read_tokens = 0;
  int64_t estimated_tokens = 0;           // requests sent without a usage report (timeouts, broken replies): prompt / 4
  int64_t truncated = 0, tool_calls = 0;  // replies cut at the limit, tool calls instead of text
  double cost = 0;
  int64_t total_tokens() const { return input_tokens + output_tokens + estimated_tokens; }
};

// The client as a progress line shows it: requests on the wire and waiting, a provider back-off with its end and
// cause, and what was spent.
struct LiveState {
  int in_flight = 0, waiting = 0;
  double backoff_left_s = 0;   // > 0 while no request may start
  std::time_t backoff_until = 0;  // wall-clock end of that back-off
  std::string backoff_why;     // what the provider answered ("HTTP 429: ...", "timed out ...")
  Usage usage;
};

// "LLM 3 in flight, 2 waiting | provider back-off until 09:12:31 UTC (27 s left: HTTP 429 ...) | 12345 tokens,
// cost 0.41" — the back-off part only while one is pending, the cost only when prices are configured.
std::string describe_live(const LiveState& s, bool priced);

struct RequestOptions {
  std::string model;   // "" = the config's (an ensemble member otherwise)
  int max_tokens = 0;  // 0 = the config's (or the model's)
};

class LlmClient {
 public:
  // Checks the config (provider, endpoint URL, model, key present when named). Errors say which key.
  static Expected<std::shared_ptr<LlmClient>> create(const LlmConfig& c);

  // `model` overrides the config's model (an ensemble member); "" = the config's.
  Expected<Completion> complete(const std::string& system, const std::string& user, const std::string& model = "");
  // One chat request: transient failures are retried (bounded), a permanent one is kept (permanent_error())
  // and refuses every later call without a request. A reply that arrives is returned even when unusable
  // (truncated, tool call, empty text): its tokens are counted either way.
  Expected<Completion> complete(const std::string& system, const std::string& user, const RequestOptions& o);
  Usage usage() const;
  LiveState live() const;
  // Holds every request of this client back for `seconds` (a later back-off already set is kept); `why` is
  // what live() says about it.
  void pause(double seconds, const std::string& why);
  // Why no more requests will be made: a spent budget or a permanent error ("" while requests can go on).
  std::string budget_exhausted() const;
  // The provider's permanent refusal that stopped this client ("" when none).
  std::string permanent_error() const;
  const LlmConfig& config() const { return c_; }
  int max_tokens_for(const std::string& model) const;
  int max_tokens_limit() const { return c_.max_tokens_limit > 0 ? c_.max_tokens_limit : 4 * c_.max_tokens; }
  int64_t backoff_waits() const { return gate_.backoff_waits(); }
  // Appends to the journal what became of a reply (e.g. "used: the child's kernel", "not used: <why>"),
  // joined to the reply's line by its journal_ref; nothing without a journal.
  void journal_outcome(const Completion& c, const std::string& outcome) const;

 private:
  LlmClient(LlmConfig c, Url url, std::string key)
      : c_(std::move(c)), url_(std::move(url)), key_(std::move(key)), gate_(c_.concurrency, c_.requests_per_minute) {}
  std::string request_body(const std::string& model, const std::string& system, const std::string& user,
                           int max_tokens) const;
  void count(const Completion& c);  // adds a reply's tokens and cost to the usage
  // Appends one request's line to the journal (when there is one).
  void record(const std::string& model, int attempt, int status, const std::string& cls, const Completion* c,
              int64_t estimated, const std::string& error, const std::string& raw = "") const;
  double backoff(int attempt, double asked);   // the wait before the next attempt, with jitter
  std::string redact(std::string text) const;  // the key never leaves in a message, even if a server echoes it

  LlmConfig c_;
  Url url_;
  std::string key_;
  ProviderGate gate_;
  mutable std::mutex mu_;
  Usage usage_;
  std::string permanent_;
  std::string backoff_why_;  // the cause of the latest back-off
  mutable std::mutex journal_mu_;
  // Journal refs: this client's tag (its start time and process) and a count, unique across runs on one journal.
  std::string journal_tag_ = std::to_string(std::time(nullptr)) + "." + std::to_string(::getpid());
  std::atomic<int64_t> journal_seq_{0};
  std::mt19937_64 jitter_{std::random_device{}()};
};

}  // namespace kevolve::llm
