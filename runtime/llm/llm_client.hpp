// LlmClient: chat completions from a user's endpoint — OpenAI-compatible (OpenAI, vLLM, SGLang,
// llama.cpp server, Ollama) or Anthropic Messages — with timeouts, retries with exponential back-off on
// 429/5xx and transport errors (honouring Retry-After), and token/cost accounting. The API key is read
// from the environment variable the config names and is never logged or put in an error message.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/llm/http_client.hpp"

namespace kevolve::llm {

struct LlmConfig {
  std::string provider = "openai";  // openai | anthropic
  std::string endpoint;             // full URL, e.g. http://127.0.0.1:8000/v1/chat/completions
  std::string model;
  std::vector<std::pair<std::string, double>> ensemble;  // several models with weights; empty = `model` alone
  std::string api_key_env;                               // name of the environment variable holding the key ("" = none)
  std::string ca_file;  // HTTPS: PEM file of CAs to trust instead of the system's ("" = system)
  double temperature = 0.7;
  int max_tokens = 4096;
  double timeout_s = 120;
  int retries = 4;                                     // extra attempts after the first
  double backoff_s = 1.0;                              // first back-off; doubles each retry, capped at 60 s
  double cost_per_mtok_in = 0, cost_per_mtok_out = 0;  // for the cost figure
  int64_t token_budget = 0;                            // input + output tokens for the whole search; 0 = no limit
  double cost_budget = 0;                              // in the cost unit above; 0 = no limit
};

struct Completion {
  std::string text;
  int64_t input_tokens = 0, output_tokens = 0;
  int attempts = 0;
};

struct Usage {
  int64_t requests = 0, failures = 0, input_tokens = 0, output_tokens = 0;
  double cost = 0;
};

class LlmClient {
 public:
  // Checks the config (provider, endpoint URL, model, key present when named). Errors say which key.
  static Expected<std::shared_ptr<LlmClient>> create(const LlmConfig& c);

  // `model` overrides the config's model (an ensemble member); "" = the config's.
  Expected<Completion> complete(const std::string& system, const std::string& user, const std::string& model = "");
  Usage usage() const;
  // Why no more requests will be made ("" while within the budgets).
  std::string budget_exhausted() const;
  const LlmConfig& config() const { return c_; }

 private:
  LlmClient(LlmConfig c, Url url, std::string key) : c_(std::move(c)), url_(std::move(url)), key_(std::move(key)) {}
  std::string request_body(const std::string& model, const std::string& system, const std::string& user) const;
  Expected<Completion> parse(const std::string& body) const;
  std::string redact(std::string text) const;  // the key never leaves in a message, even if a server echoes it

  LlmConfig c_;
  Url url_;
  std::string key_;
  mutable std::mutex mu_;
  Usage usage_;
};

}  // namespace kevolve::llm
