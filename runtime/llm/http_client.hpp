// One HTTP(S) POST with a deadline — the transport of the LLM providers. Boost.Beast and OpenSSL stay
// inside http_client.cpp. Errors (DNS, connect, TLS, timeout, truncated body) come back as data.
#pragma once
#include <map>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::llm {

struct Url {
  bool tls = false;
  std::string host, port, target;  // target: path and query, e.g. /v1/chat/completions
};

// Parses http://host[:port]/path or https://host[:port]/path; errors name what is wrong.
Expected<Url> parse_url(const std::string& url);

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // decoded from its content coding
  std::string decoded_from;                    // the Content-Encoding it came in ("" = none)
};

// Checks that a TCP connection to the endpoint can be opened within timeout_s ("" or the error).
std::string probe(const Url& url, double timeout_s);

// POSTs `body` (JSON) with extra `headers`; the whole exchange must finish within timeout_s. HTTPS
// verifies the server's certificate and name against the system's CAs, or against `ca_file` (PEM) when
// one is given (an endpoint behind a private CA). Error codes: unavailable (nothing was sent: resolve,
// connect, TLS), timeout (sent, no whole reply in time), io (sent, the reply broke off), corrupt (a gzip or
// deflate body that does not decode), invalid_argument (ca_file unusable, or a content coding it cannot read).
// It asks for gzip or deflate; the body comes back decoded whatever coding the server chose.
Expected<HttpResponse> http_post(const Url& url, const std::map<std::string, std::string>& headers,
                                 const std::string& body, double timeout_s, const std::string& ca_file = "");

}  // namespace kevolve::llm
