#include "runtime/llm/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <chrono>

#include "runtime/llm/content_coding.hpp"

namespace kevolve::llm {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

Expected<Url> parse_url(const std::string& url) {
  Url u;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0)
    rest = url.substr(7);
  else
    return Expected<Url>::failure("endpoint '" + url + "': expected http://HOST[:PORT]/PATH or https://...");
  const auto slash = rest.find('/');
  const std::string hostport = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  const auto colon = hostport.rfind(':');
  if (colon != std::string::npos && hostport.find(']') == std::string::npos) {
    u.host = hostport.substr(0, colon);
    u.port = hostport.substr(colon + 1);
  } else {
    u.host = hostport;
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.empty() || u.port.empty() || !std::all_of(u.port.begin(), u.port.end(), ::isdigit))
    return Expected<Url>::failure("endpoint '" + url + "': cannot read the host and port");
  return u;
}

namespace {

constexpr size_t kMaxBody = 64u << 20;  // a reply's body, as sent and as decoded

template <class Stream>
Expected<HttpResponse> exchange(net::io_context& ioc, Stream& stream, const Url& url,
                                const std::map<std::string, std::string>& headers, const std::string& body,
                                std::chrono::steady_clock::time_point deadline, beast::tcp_stream& lowest) {
  http::request<http::string_body> req{http::verb::post, url.target, 11};
  // Host names the port unless it is the scheme's default (RFC 9110 7.2); an IPv6 literal keeps its brackets.
  const bool default_port = url.port == (url.tls ? "443" : "80");
  req.set(http::field::host, default_port ? url.host : url.host + ":" + url.port);
  req.set(http::field::accept_encoding, "gzip, deflate");
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "kevolve");
  for (auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  bool done = false;
  lowest.expires_at(deadline);
  http::async_write(stream, req, [&](beast::error_code e, size_t) {
    if (e) {
      ec = e;
      done = true;
      return;
    }
    lowest.expires_at(deadline);
    http::async_read(stream, buf, parser, [&](beast::error_code e2, size_t) {
      ec = e2;
      done = true;
    });
  });
  ioc.restart();
  ioc.run();
  if (!done || ec) {
    if (ec == beast::error::timeout)
      return Expected<HttpResponse>::failure(Errc::timeout, "timed out waiting for the reply");
    if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == net::error::eof)
      return Expected<HttpResponse>::failure(Errc::io,
                                             "the connection closed before the whole reply arrived (truncated)");
    return Expected<HttpResponse>::failure(Errc::io, "HTTP exchange failed: " + ec.message());
  }
  HttpResponse r;
  auto& msg = parser.get();
  r.status = static_cast<int>(msg.result_int());
  for (auto& f : msg) {
    std::string name(f.name_string());
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    r.headers[name] = std::string(f.value());
  }
  r.body = std::move(msg.body());
  if (auto enc = r.headers.find("content-encoding"); enc != r.headers.end()) {
    auto plain = decode_content(enc->second, std::move(r.body), kMaxBody);
    if (!plain) return Expected<HttpResponse>::failure(plain.status());
    r.body = std::move(*plain);
    r.decoded_from = enc->second;
    r.headers.erase(enc);
  }
  return r;
}

}  // namespace

std::string probe(const Url& url, double timeout_s) {
  try {
    net::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::error_code ec;
    auto results = resolver.resolve(url.host, url.port, ec);
    if (ec) return "cannot resolve " + url.host + ": " + ec.message();
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    stream.async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    ioc.run();
    if (ec) return "cannot connect to " + url.host + ":" + url.port + ": " + ec.message();
    return {};
  } catch (const std::exception& e) { return e.what(); }
}

Expected<HttpResponse> http_post(const Url& url, const std::map<std::string, std::string>& headers,
                                 const std::string& body, double timeout_s, const std::string& ca_file) {
  using R = Expected<HttpResponse>;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  try {
    net::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::error_code ec;
    auto results = resolver.resolve(url.host, url.port, ec);
    if (ec) return R::failure(Errc::unavailable, "cannot resolve " + url.host + ": " + ec.message());
    if (!url.tls) {
      beast::tcp_stream stream(ioc);
      stream.expires_at(deadline);
      stream.async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
      ioc.run();
      if (ec)
        return R::failure(Errc::unavailable, "cannot connect to " + url.host + ":" + url.port + ": " + ec.message());
      auto r = exchange(ioc, stream, url, headers, body, deadline, stream);
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      return r;
    }
    net::ssl::context ctx(net::ssl::context::tls_client);
    if (ca_file.empty()) {
      ctx.set_default_verify_paths();
    } else {
      ctx.load_verify_file(ca_file, ec);
      if (ec)
        return R::failure(Errc::invalid_argument,
                          "llm.ca_file: cannot use '" + ca_file + "' as CA certificates: " + ec.message());
    }
    ctx.set_verify_mode(net::ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
    if (!SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str()))
      return R::failure("TLS: cannot set the server name");
    stream.set_verify_callback(net::ssl::host_name_verification(url.host));
    beast::get_lowest_layer(stream).expires_at(deadline);
    beast::get_lowest_layer(stream).async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    ioc.run();
    if (ec)
      return R::failure(Errc::unavailable, "cannot connect to " + url.host + ":" + url.port + ": " + ec.message());
    ioc.restart();
    stream.async_handshake(net::ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
    ioc.run();
    if (ec) return R::failure(Errc::unavailable, "TLS handshake with " + url.host + " failed: " + ec.message());
    return exchange(ioc, stream, url, headers, body, deadline, beast::get_lowest_layer(stream));
  } catch (const std::exception& e) { return R::failure(std::string("HTTP client error: ") + e.what()); }
}

}  // namespace kevolve::llm
