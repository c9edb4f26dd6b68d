// How the LLM client treats each answer a provider gives: transient failures (timeouts, 408, 409, 429 rate
// limits, 5xx, 529 overloaded) are retried after a back-off that honours the provider's retry-after,
// retry-after-ms or HTTP-date Retry-After; permanent failures (401, 403, 404, 400 and other 4xx, quota and
// spend-limit 429s) end the search at once with the provider's own message.
#pragma once
#include <ctime>
#include <map>
#include <string>

namespace kevolve::llm {

enum class ErrorClass { transient, permanent };

struct HttpVerdict {
  ErrorClass cls = ErrorClass::transient;
  std::string reason;         // e.g. "HTTP 401 (authentication failed): Incorrect API key provided"
  double retry_after_s = -1;  // what the provider asked for (seconds), -1 when it said nothing
};

// Classifies a non-200 answer from its status, headers (lower-case names) and body. A 429 is permanent when
// the body names a spent quota, credit or spend limit (OpenAI `insufficient_quota`, Anthropic's spend limit),
// transient otherwise.
HttpVerdict classify_http(int status, const std::map<std::string, std::string>& headers, const std::string& body);

// The provider's own error message from a JSON error body ({"error":{"message":...}} in both protocols, or
// {"error":"..."}), else the body's start; at most 300 characters.
std::string provider_message(const std::string& body);

// The wait a provider asked for, in seconds: retry-after-ms, else retry-after as seconds or as an HTTP date
// (relative to `now`); -1 when neither is present or readable.
double retry_after_seconds(const std::map<std::string, std::string>& headers, std::time_t now);

}  // namespace kevolve::llm
