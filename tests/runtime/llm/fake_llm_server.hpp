// A real HTTP server on 127.0.0.1 for the LLM provider tests: it answers each request with the next
// scripted reply (status, headers, body, delay, or a body cut short) — or with what a generator makes for
// the n-th request — and records what it received. Each connection is served on a thread of its own, so
// concurrent requests overlap as they do at a provider. Constructed with a certificate and key (PEM files)
// it speaks HTTPS instead. The body builders write the providers' real reply formats.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kevolve::test {

class FakeLlmServer {
 public:
  struct Reply {
    int status = 200;
    std::string body;
    std::map<std::string, std::string> headers;
    int delay_ms = 0;
    bool truncate = false;  // announce the full length, send half, close
  };
  struct Request {
    std::string target, body;
    std::map<std::string, std::string> headers;  // lower-case names
    std::chrono::steady_clock::time_point at{};  // when it arrived
  };

  FakeLlmServer() : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { serve(); });
  }
  FakeLlmServer(const std::string& cert_pem, const std::string& key_pem)
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}), tls_(true) {
    ssl_.use_certificate_chain_file(cert_pem);
    ssl_.use_private_key_file(key_pem, boost::asio::ssl::context::pem);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeLlmServer() {
    stop_ = true;
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket s(ioc_);
    s.connect(acceptor_.local_endpoint(), ec);  // wake the accept
    thread_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> l(mu_);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
  }
  // Replies made by `g(n)` for the n-th request (0-based) once the scripted ones are used up.
  void generate(std::function<Reply(int)> g) {
    std::lock_guard<std::mutex> l(mu_);
    generator_ = std::move(g);
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::string url(const std::string& path) const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port()) + path;
  }
  void push(Reply r) {
    std::lock_guard<std::mutex> l(mu_);
    replies_.push_back(std::move(r));
  }
  std::vector<Request> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

  static std::string openai_body(const std::string& text, int in = 11, int out = 7) {
    return "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":" + quote(text) +
           "}}],\"usage\":{\"prompt_tokens\":" + std::to_string(in) + ",\"completion_tokens\":" + std::to_string(out) +
           "}}";
  }
  static std::string anthropic_body(const std::string& text, int in = 13, int out = 5) {
    return "{\"id\":\"m\",\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":" + quote(text) +
           "}],\"usage\":{\"input_tokens\":" + std::to_string(in) + ",\"output_tokens\":" + std::to_string(out) + "}}";
  }
  // An OpenAI chat completion as the API writes it, with its finish_reason; `reasoning` goes into
  // reasoning_content (DeepSeek, vLLM with a reasoning parser).
  static std::string openai_full(const std::string& text, const std::string& finish, int in, int out,
                                 const std::string& reasoning = "") {
    return "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
           "\"message\":{\"role\":\"assistant\",\"content\":" +
           quote(text) + (reasoning.empty() ? "" : ",\"reasoning_content\":" + quote(reasoning)) +
           ",\"refusal\":null},\"logprobs\":null,\"finish_reason\":\"" + finish +
           "\"}],\"usage\":{\"prompt_tokens\":" + std::to_string(in) + ",\"completion_tokens\":" + std::to_string(out) +
           ",\"total_tokens\":" + std::to_string(in + out) + "}}";
  }
  // OpenAI: the model called a tool — content null, tool_calls, finish_reason "tool_calls".
  static std::string openai_tool_call(int in, int out) {
    return "{\"id\":\"chatcmpl-8\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{"
           "\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
           "\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"path\\\":\\\"k.cpp\\\"}\"}}]},"
           "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":" +
           std::to_string(in) + ",\"completion_tokens\":" + std::to_string(out) + "}}";
  }
  // Anthropic Messages with several content blocks (each {"type":..., "text"/"thinking": ...}), stop_reason
  // and the cache token counts.
  static std::string anthropic_blocks(const std::vector<std::pair<std::string, std::string>>& blocks,
                                      const std::string& stop, int in, int out, int cache_write = 0,
                                      int cache_read = 0) {
    std::string c;
    for (auto& [type, text] : blocks)
      c += std::string(c.empty() ? "" : ",") + "{\"type\":\"" + type + "\",\"" +
           (type == "thinking" ? "thinking" : "text") + "\":" + quote(text) +
           (type == "thinking" ? ",\"signature\":\"sig\"" : "") + "}";
    return "{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[" + c +
           "],\"stop_reason\":\"" + stop +
           "\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":" + std::to_string(in) +
           ",\"cache_creation_input_tokens\":" + std::to_string(cache_write) +
           ",\"cache_read_input_tokens\":" + std::to_string(cache_read) + ",\"output_tokens\":" + std::to_string(out) +
           "}}";
  }
  static std::string openai_error(const std::string& message, const std::string& type, const std::string& code) {
    return "{\"error\":{\"message\":" + quote(message) + ",\"type\":\"" + type + "\",\"param\":null,\"code\":\"" +
           code + "\"}}";
  }
  static std::string anthropic_error(const std::string& type, const std::string& message) {
    return "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":" + quote(message) + "}}";
  }

 private:
  static std::string quote(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      if (c == '\n') {
        o += "\\n";
        continue;
      }
      o += c;
    }
    return o + "\"";
  }

  void serve() {
    while (!stop_) {
      boost::asio::ip::tcp::socket sock(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(sock, ec);
      if (ec || stop_) break;
      std::lock_guard<std::mutex> l(mu_);
      workers_.emplace_back([this, sock = std::move(sock)]() mutable { serve_one(std::move(sock)); });
    }
  }

  void serve_one(boost::asio::ip::tcp::socket sock) {
    boost::system::error_code ec;
    if (!tls_) {
      answer(sock);
      sock.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
      return;
    }
    boost::asio::ssl::stream<boost::asio::ip::tcp::socket> s(std::move(sock), ssl_);
    s.handshake(boost::asio::ssl::stream_base::server, ec);
    if (ec) return;  // e.g. a client that refused our certificate
    answer(s);
    s.shutdown(ec);
  }

  // Reads one request from `stream` and writes the next scripted reply.
  template <class Stream>
  void answer(Stream& stream) {
    namespace http = boost::beast::http;
    boost::system::error_code ec;
    boost::beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::read(stream, buf, req, ec);
    if (ec) return;
    Reply r;
    {
      std::lock_guard<std::mutex> l(mu_);
      Request rec{std::string(req.target()), req.body(), {}, std::chrono::steady_clock::now()};
      for (auto& f : req) {
        std::string n(f.name_string());
        for (auto& c : n) c = static_cast<char>(::tolower(c));
        rec.headers[n] = std::string(f.value());
      }
      requests_.push_back(rec);
      if (!replies_.empty()) {
        r = replies_.front();
        replies_.pop_front();
      } else if (generator_)
        r = generator_(static_cast<int>(requests_.size()) - 1);
      else
        r = Reply{500, "{\"error\":\"no scripted reply\"}"};
    }
    if (r.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(r.delay_ms));
    if (r.truncate) {
      std::string head = "HTTP/1.1 " + std::to_string(r.status) +
                         " OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(r.body.size()) +
                         "\r\n\r\n" + r.body.substr(0, r.body.size() / 2);
      boost::asio::write(stream, boost::asio::buffer(head), ec);
      return;
    }
    http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
    res.set(http::field::content_type, "application/json");
    for (auto& [k, v] : r.headers) res.set(k, v);
    res.body() = r.body;
    res.prepare_payload();
    http::write(stream, res, ec);
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  std::vector<std::thread> workers_;
  std::function<Reply(int)> generator_;
  std::mutex mu_;
  std::deque<Reply> replies_;
  std::vector<Request> requests_;
  std::atomic<bool> stop_{false};
  bool tls_ = false;
  boost::asio::ssl::context ssl_{boost::asio::ssl::context::tls_server};
};

}  // namespace kevolve::test
