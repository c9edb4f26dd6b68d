#include "runtime/dashboard/dashboard_server.hpp"

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace kevolve::dashboard {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// The page loads nothing from elsewhere and may be framed by no one.
constexpr const char* kCsp =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// One accepted connection; the watchdog cuts it when its deadline passes.
struct Conn {
  explicit Conn(tcp::socket s) : socket(std::move(s)) {}
  tcp::socket socket;
  std::mutex m;
  bool closed = false;
  Clock::time_point deadline = Clock::time_point::max();
  std::atomic<bool> done{false};
  std::thread thread;

  void expire_in(double s) {
    std::lock_guard<std::mutex> lk(m);
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  void no_deadline() {
    std::lock_guard<std::mutex> lk(m);
    deadline = Clock::time_point::max();
  }
  bool expired(Clock::time_point now) {
    std::lock_guard<std::mutex> lk(m);
    return now > deadline;
  }
  // Makes every pending and later read or write of the connection fail at once (any thread).
  void cut() {
    std::lock_guard<std::mutex> lk(m);
    if (!closed) ::shutdown(socket.native_handle(), SHUT_RDWR);
  }
  void close() {
    std::lock_guard<std::mutex> lk(m);
    closed = true;
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }
};

class Impl : public Server {
 public:
  Impl(ServerOptions o, Console console)
      : o_(std::move(o)),
        console_(std::move(console)),
        check_(o_.token),
        acceptor_(io_),
        ctx_(ssl::context::tls_server) {}
  ~Impl() override { stop(); }

  Status start() {
    if (o_.token.size() < 16)
      return Status::failure(Errc::invalid_argument, "the dashboard's token is shorter than 16 characters");
    tls_ = !o_.tls_cert.empty() && !o_.tls_key.empty();
    if (tls_) {
      try {
        ctx_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
        ctx_.use_certificate_chain_file(o_.tls_cert);
        ctx_.use_private_key_file(o_.tls_key, ssl::context::pem);
      } catch (const std::exception& e) {
        return Status::failure(Errc::invalid_argument,
                               "dashboard TLS (" + o_.tls_cert + ", " + o_.tls_key + "): " + e.what());
      }
    }
    try {
      const tcp::endpoint ep(asio::ip::make_address(o_.host == "localhost" ? "127.0.0.1" : o_.host), o_.port);
      acceptor_.open(ep.protocol());
      acceptor_.set_option(tcp::acceptor::reuse_address(true));
      acceptor_.bind(ep);
      acceptor_.listen();
      port_ = acceptor_.local_endpoint().port();
    } catch (const std::exception& e) {
      return Status::failure(Errc::unavailable, "the dashboard cannot listen on " + o_.host + ":" +
                                                    std::to_string(o_.port) + ": " + e.what());
    }
    accepting_ = std::thread([this] { accept_loop(); });
    watching_ = std::thread([this] { watch_loop(); });
    return Status::success();
  }

  uint16_t port() const override { return port_; }
  bool tls() const override { return tls_; }

 private:
  void accept_loop() {
    while (!stopping_) {
      tcp::socket sock(io_);
      beast::error_code ec;
      acceptor_.accept(sock, ec);
      if (stopping_) return;
      if (ec) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // out of descriptors, for instance
        continue;
      }
      auto conn = std::make_shared<Conn>(std::move(sock));
      std::lock_guard<std::mutex> lk(conns_m_);
      if (static_cast<int>(conns_.size()) >= o_.max_connections) {
        conn->close();
        continue;
      }
      conns_.push_back(conn);
      conn->thread = std::thread([this, conn] {
        serve(*conn);
        conn->close();
        conn->done = true;
      });
    }
  }

  // Cuts connections past their deadline and joins the threads of those that ended.
  void watch_loop() {
    std::unique_lock<std::mutex> wait(stop_m_);
    while (!stopping_) {
      {
        std::lock_guard<std::mutex> lk(conns_m_);
        const auto now = Clock::now();
        for (auto it = conns_.begin(); it != conns_.end();) {
          if ((*it)->done) {
            (*it)->thread.join();
            it = conns_.erase(it);
            continue;
          }
          if ((*it)->expired(now)) (*it)->cut();
          ++it;
        }
      }
      stop_cv_.wait_for(wait, std::chrono::milliseconds(200));
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(stop_m_);
      if (stopping_.exchange(true)) return;
    }
    stop_cv_.notify_all();
    if (acceptor_.is_open()) ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (accepting_.joinable()) accepting_.join();
    if (watching_.joinable()) watching_.join();
    std::lock_guard<std::mutex> lk(conns_m_);
    for (auto& c : conns_) c->cut();
    for (auto& c : conns_)
      if (c->thread.joinable()) c->thread.join();
    conns_.clear();
    beast::error_code ec;
    acceptor_.close(ec);
  }

  void serve(Conn& c) {
    if (!tls_) return session(c.socket, c);
    ssl::stream<tcp::socket&> s(c.socket, ctx_);
    beast::error_code ec;
    c.expire_in(o_.timeout_s);
    s.handshake(ssl::stream_base::server, ec);
    if (ec) return;
    session(s, c);
    c.expire_in(2);
    s.shutdown(ec);
  }

  template <class Stream>
  bool write(Stream& s, const Response& r, bool keep_alive) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
    res.set(http::field::server, "kevolve");
    res.set(http::field::cache_control, "no-store");
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "no-referrer");
    res.set("Content-Security-Policy", kCsp);
    if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res.set(k, v);
    res.body() = r.body;
    res.keep_alive(keep_alive);
    res.prepare_payload();
    beast::error_code ec;
    http::write(s, res, ec);
    return !ec;
  }

  template <class Stream>
  void session(Stream& s, Conn& c) {
    beast::flat_buffer buf(o_.max_header + o_.max_body);
    while (!stopping_) {
      c.expire_in(o_.timeout_s);  // the whole request, or the idle time before the next one
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(o_.max_header));
      parser.body_limit(o_.max_body);
      beast::error_code ec;
      http::read(s, buf, parser, ec);
      if (ec == http::error::header_limit || ec == http::error::body_limit || ec == http::error::buffer_overflow) {
        Response too_big;
        too_big.status = 413;
        write(s, too_big, false);
        return;
      }
      if (ec) return;
      const auto& m = parser.get();
      Request r;
      r.method = std::string(m.method_string());
      r.target = std::string(m.target());
      for (auto& f : m) {
        std::string name(f.name_string());
        for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        r.headers[name] = std::string(f.value());
      }
      r.body = m.body();
      c.no_deadline();  // the console has a timeout of its own
      const Access a = authorize(r, check_, tls_);
      Response out;
      if (!a.granted)
        out = unauthorised();
      else if (a.login)
        out = *a.login;
      else if (wants_events(r))
        return events(s, c);
      else
        out = handle(r, console_);
      c.expire_in(o_.timeout_s);
      if (!write(s, out, m.keep_alive()) || !m.keep_alive()) return;
    }
  }

  // The event stream: one event, then the connection ends; the browser's EventSource reconnects after the
  // `retry` delay (event_period_s). A stream held open would keep one of the browser's six connections per
  // host for as long as the page lives: from the sixth open tab on, every request of a page would queue.
  template <class Stream>
  void events(Stream& s, Conn& c) {
    const auto retry_ms = static_cast<long long>(o_.event_period_s * 1000);
    const std::string e = next_event(console_, ++event_id_);
    const std::string reply =
        "HTTP/1.1 200 OK\r\nServer: kevolve\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
        "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: " +
        std::to_string(retry_ms) + "\n" + e;
    beast::error_code ec;
    c.expire_in(o_.timeout_s);
    asio::write(s, asio::buffer(reply), ec);
  }

  ServerOptions o_;
  Console console_;
  TokenCheck check_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  ssl::context ctx_;
  bool tls_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> event_id_{0};
  std::mutex stop_m_;
  std::condition_variable stop_cv_;
  std::mutex conns_m_;
  std::list<std::shared_ptr<Conn>> conns_;
  std::thread accepting_, watching_;
};

}  // namespace

Expected<std::unique_ptr<Server>> open_server(const ServerOptions& o, Console console) {
  using R = Expected<std::unique_ptr<Server>>;
  auto s = std::make_unique<Impl>(o, std::move(console));
  if (auto ok = s->start(); !ok) return R::failure(ok);
  return R(std::unique_ptr<Server>(std::move(s)));
}

}  // namespace kevolve::dashboard
