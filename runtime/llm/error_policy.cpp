#include "runtime/llm/error_policy.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace kevolve::llm {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Whether a 429 body says the account cannot pay rather than that it asks too fast.
bool names_spent_quota(const std::string& body) {
  const std::string b = lower(body);
  for (const char* w : {"insufficient_quota", "exceeded your current quota", "spend limit", "spend_limit",
                        "credit balance", "billing", "usage limit"})
    if (b.find(w) != std::string::npos) return true;
  return false;
}

const char* status_words(int s) {
  switch (s) {
    case 400:
      return "invalid request";
    case 401:
      return "authentication failed";
    case 403:
      return "permission denied";
    case 404:
      return "not found: check the endpoint and the model name";
    case 408:
      return "request timeout";
    case 409:
      return "conflict";
    case 413:
      return "request too large";
    case 422:
      return "unprocessable request";
    case 429:
      return "rate limited";
    case 529:
      return "overloaded";
    default:
      return s >= 500 ? "server error" : "client error";
  }
}

// Parses an HTTP date (IMF-fixdate, e.g. "Wed, 21 Oct 2015 07:28:00 GMT") as UTC; -1 when unreadable.
std::time_t parse_http_date(const std::string& s) {
  static const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char wd[8] = {}, mon[8] = {};
  int day = 0, year = 0, h = 0, m = 0, sec = 0;
  if (std::sscanf(s.c_str(), "%3s, %d %3s %d %d:%d:%d", wd, &day, mon, &year, &h, &m, &sec) != 7) return -1;
  int mi = -1;
  for (int i = 0; i < 12; ++i)
    if (std::strcmp(mon, months[i]) == 0) mi = i;
  if (mi < 0) return -1;
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = mi;
  t.tm_mday = day;
  t.tm_hour = h;
  t.tm_min = m;
  t.tm_sec = sec;
  return timegm(&t);
}

}  // namespace

std::string provider_message(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view msg;
  if (!p.parse(body).get(doc)) {
    if (!doc["error"]["message"].get(msg) || !doc["error"].get(msg) || !doc["message"].get(msg))
      return std::string(msg.substr(0, 300));
  }
  return body.substr(0, 300);
}

double retry_after_seconds(const std::map<std::string, std::string>& headers, std::time_t now) {
  if (auto it = headers.find("retry-after-ms"); it != headers.end()) {
    char* end = nullptr;
    const double ms = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && ms >= 0) return ms / 1000.0;
  }
  if (auto it = headers.find("retry-after"); it != headers.end()) {
    char* end = nullptr;
    const double s = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && s >= 0) return s;
    const std::time_t at = parse_http_date(it->second);
    if (at >= 0) return std::max(0.0, static_cast<double>(at - now));
  }
  return -1;
}

HttpVerdict classify_http(int status, const std::map<std::string, std::string>& headers, const std::string& body) {
  HttpVerdict v;
  v.retry_after_s = retry_after_seconds(headers, std::time(nullptr));
  const bool transient =
      status == 408 || status == 409 || status == 425 || status >= 500 || (status == 429 && !names_spent_quota(body));
  v.cls = transient ? ErrorClass::transient : ErrorClass::permanent;
  const bool quota = status == 429 && !transient;
  v.reason = "HTTP " + std::to_string(status) + " (" + (quota ? "quota or spend limit reached" : status_words(status)) +
             "): " + provider_message(body);
  return v;
}

}  // namespace kevolve::llm
