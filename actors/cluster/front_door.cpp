#include "actors/cluster/front_door.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <array>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "actors/cluster/hmac.hpp"

namespace kevolve::cluster {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr const char* kGreeting = "KEVOLVE-CLUSTER 1 ";
constexpr size_t kMaxLine = 1024;

// One connection's byte stream: plain TCP or TLS over TCP.
class Stream {
 public:
  explicit Stream(tcp::socket s) : plain_(std::move(s)) {}
  Stream(tcp::socket s, ssl::context& ctx) : secure_(std::make_unique<ssl::stream<tcp::socket>>(std::move(s), ctx)) {}

  tcp::socket& socket() { return secure_ ? secure_->next_layer() : *plain_; }
  bool tls() const { return secure_ != nullptr; }
  ssl::stream<tcp::socket>& secure() { return *secure_; }

  template <class Buffer, class Handler>
  void read_some(const Buffer& b, Handler&& h) {
    if (secure_)
      secure_->async_read_some(b, std::forward<Handler>(h));
    else
      plain_->async_read_some(b, std::forward<Handler>(h));
  }
  template <class Buffer, class Handler>
  void write(const Buffer& b, Handler&& h) {
    if (secure_)
      asio::async_write(*secure_, b, std::forward<Handler>(h));
    else
      asio::async_write(*plain_, b, std::forward<Handler>(h));
  }
  template <class Handler>
  void read_line(asio::streambuf& buf, Handler&& h) {
    if (secure_)
      asio::async_read_until(*secure_, buf, '\n', std::forward<Handler>(h));
    else
      asio::async_read_until(*plain_, buf, '\n', std::forward<Handler>(h));
  }
  void close() {
    error_code ec;
    socket().shutdown(tcp::socket::shutdown_both, ec);
    socket().close(ec);
  }

 private:
  std::optional<tcp::socket> plain_;
  std::unique_ptr<ssl::stream<tcp::socket>> secure_;
};

// Copies bytes from `from` to `to` until either side ends; then closes both.
void pump(std::shared_ptr<Stream> from, std::shared_ptr<Stream> to) {
  auto buf = std::make_shared<std::array<char, 64 * 1024>>();
  from->read_some(asio::buffer(*buf), [from, to, buf](error_code ec, size_t n) {
    if (ec) {
      from->close();
      to->close();
      return;
    }
    to->write(asio::buffer(buf->data(), n), [from, to, buf](error_code ec2, size_t) {
      if (ec2) {
        from->close();
        to->close();
        return;
      }
      pump(from, to);
    });
  });
}

// Relays `a` <-> `b`, first handing `a_pending` (bytes `a` sent ahead of the relay) to `b`. Nagle off on
// both: BASP sends many small messages, each of which would otherwise wait for the previous one's ACK.
void relay(std::shared_ptr<Stream> a, std::shared_ptr<Stream> b, std::string a_pending) {
  error_code ignored;
  a->socket().set_option(tcp::no_delay(true), ignored);
  b->socket().set_option(tcp::no_delay(true), ignored);
  if (a_pending.empty()) {
    pump(a, b);
    pump(b, a);
    return;
  }
  auto data = std::make_shared<std::string>(std::move(a_pending));
  b->write(asio::buffer(*data), [a, b, data](error_code ec, size_t) {
    if (ec) {
      a->close();
      b->close();
      return;
    }
    pump(a, b);
    pump(b, a);
  });
}

// The first line in `buf` (without its newline); the rest stays in `buf`.
std::string take_line(asio::streambuf& buf, size_t n) {
  std::string all(asio::buffers_begin(buf.data()), asio::buffers_begin(buf.data()) + static_cast<std::ptrdiff_t>(n));
  buf.consume(n);
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  return all;
}

std::string rest_of(asio::streambuf& buf) {
  std::string s(asio::buffers_begin(buf.data()), asio::buffers_end(buf.data()));
  buf.consume(buf.size());
  return s;
}

void load_tls(ssl::context& ctx, const DoorTls& t) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx.use_certificate_chain_file(t.cert);
  ctx.use_private_key_file(t.key, ssl::context::pem);
  ctx.load_verify_file(t.ca);
  ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
}

class Door : public FrontDoor {
 public:
  explicit Door(const DoorOptions& o) : o_(o), acceptor_(io_), tls_(ssl::context::tls) {}
  ~Door() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string start() {
    try {
      if (o_.tls.on()) load_tls(tls_, o_.tls);
      const tcp::endpoint ep(asio::ip::make_address(o_.host == "localhost" ? "127.0.0.1" : o_.host), o_.port);
      acceptor_.open(ep.protocol());
      acceptor_.set_option(tcp::acceptor::reuse_address(true));
      acceptor_.bind(ep);
      acceptor_.listen();
    } catch (const std::exception& e) { return std::string(e.what()); }
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
    return {};
  }

  uint16_t port() const override { return port_; }

 private:
  struct Session {
    std::shared_ptr<Stream> stream;
    std::string peer, nonce;
    asio::streambuf line{kMaxLine};
    asio::steady_timer deadline;
    bool done = false;
    explicit Session(asio::io_context& io) : deadline(io) {}
  };

  void accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket s) {
      if (!ec) serve(std::move(s));
      if (acceptor_.is_open()) accept();
    });
  }

  // Token bucket per peer address: handshakes_per_s, burst twice that.
  bool admit(const std::string& ip) {
    auto& b = buckets_[ip];
    const auto now = Clock::now();
    const double cap = 2 * o_.handshakes_per_s;
    if (b.last == Clock::time_point{}) b.tokens = cap;
    b.tokens = std::min(cap, b.tokens + std::chrono::duration<double>(now - b.last).count() * o_.handshakes_per_s);
    b.last = now;
    if (buckets_.size() > 65536) buckets_.clear();  // bounded under a flood of addresses
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  void refuse(const std::shared_ptr<Session>& s, const std::string& why, bool tell) {
    if (s->done) return;
    s->done = true;
    s->deadline.cancel();
    std::cerr << "kevolve node: refused a connection from " << s->peer << ": " << why << "\n";
    if (!tell) {
      s->stream->close();
      return;
    }
    auto text = std::make_shared<std::string>("NO " + why + "\n");
    s->stream->write(asio::buffer(*text), [s, text](error_code, size_t) { s->stream->close(); });
  }

  void serve(tcp::socket sock) {
    error_code ec;
    const auto remote = sock.remote_endpoint(ec);
    const std::string ip = ec ? "unknown" : remote.address().to_string();
    if (!admit(ip)) {
      auto& b = buckets_[ip];
      if (Clock::now() - b.logged > std::chrono::seconds(1)) {
        std::cerr << "kevolve node: refused a connection from " << ip << ": too many handshakes from this address\n";
        b.logged = Clock::now();
      }
      sock.close(ec);
      return;
    }
    auto s = std::make_shared<Session>(io_);
    s->peer = ec ? ip : ip + ":" + std::to_string(remote.port());
    s->stream =
        o_.tls.on() ? std::make_shared<Stream>(std::move(sock), tls_) : std::make_shared<Stream>(std::move(sock));
    s->deadline.expires_after(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.handshake_timeout_s)));
    s->deadline.async_wait([this, s](error_code e) {
      if (!e)
        refuse(
            s,
            "no proof of the shared secret within " + std::to_string(static_cast<int>(o_.handshake_timeout_s)) + " s",
            false);
    });
    if (!s->stream->tls()) return challenge(s);
    s->stream->secure().async_handshake(ssl::stream_base::server, [this, s](error_code e) {
      if (e) return refuse(s, "TLS handshake failed: " + e.message(), false);
      challenge(s);
    });
  }

  void challenge(const std::shared_ptr<Session>& s) {
    s->nonce = make_nonce();
    auto text = std::make_shared<std::string>(std::string(kGreeting) + s->nonce + "\n");
    s->stream->write(asio::buffer(*text), [this, s, text](error_code e, size_t) {
      if (e) return refuse(s, "connection lost before the proof", false);
      s->stream->read_line(s->line, [this, s](error_code e2, size_t n) {
        if (e2)
          return refuse(s, e2 == asio::error::not_found ? "proof line too long" : "connection lost before the proof",
                        false);
        check(s, take_line(s->line, n));
      });
    });
  }

  void check(const std::shared_ptr<Session>& s, const std::string& line) {
    const auto space = line.find(' ');
    const std::string role = space == std::string::npos ? line : line.substr(0, space);
    const std::string mac = space == std::string::npos ? "" : line.substr(space + 1);
    if (role != "evaluator" && role != "console") return refuse(s, "unknown role '" + role.substr(0, 32) + "'", true);
    if (!verify(o_.secret, s->nonce, role, mac))
      return refuse(s, "wrong proof of the shared secret (" + role + ")", true);
    s->deadline.cancel();
    s->done = true;
    auto backend = std::make_shared<Stream>(tcp::socket(io_));
    auto pending = std::make_shared<std::string>(rest_of(s->line));
    backend->socket().async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), o_.backend_port), [s, backend, pending](error_code e) {
          if (e) {
            std::cerr << "kevolve node: cannot reach the node's own loopback port for " << s->peer << ": "
                      << e.message() << "\n";
            s->stream->close();
            return;
          }
          auto ok = std::make_shared<std::string>("OK\n");
          s->stream->write(asio::buffer(*ok), [s, backend, pending, ok](error_code e2, size_t) {
            if (e2) {
              s->stream->close();
              backend->close();
              return;
            }
            relay(s->stream, backend, *pending);
          });
        });
  }

  struct Bucket {
    double tokens = 0;
    Clock::time_point last{}, logged{};
  };

  DoorOptions o_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  ssl::context tls_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::map<std::string, Bucket> buckets_;
};

class ClientTunnel : public Tunnel {
 public:
  ClientTunnel() : acceptor_(io_), tls_(ssl::context::tls) {}
  ~ClientTunnel() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  uint16_t local_port() const override { return port_; }

  // Connects, proves, and starts the loopback listener and the relay thread. "" or the error; `refused`
  // when the node said NO.
  std::string open(const std::string& host, uint16_t port, const std::string& secret, const std::string& role,
                   const DoorTls& tls, double timeout_s, bool& refused) {
    try {
      if (tls.on()) load_tls(tls_, tls);
    } catch (const std::exception& e) { return std::string("TLS files: ") + e.what(); }
    std::string error;
    bool finished = false;
    tcp::resolver resolver(io_);
    error_code ec;
    auto endpoints = resolver.resolve(host, std::to_string(port), ec);
    if (ec) return "cannot resolve " + host + ": " + ec.message();
    stream_ = tls.on() ? std::make_shared<Stream>(tcp::socket(io_), tls_) : std::make_shared<Stream>(tcp::socket(io_));
    auto fail = [&](const std::string& e) {
      error = e;
      finished = true;
    };
    asio::async_connect(stream_->socket(), endpoints, [&](error_code e, const tcp::endpoint&) {
      if (e) return fail("cannot connect: " + e.message());
      auto greet = [&] {
        stream_->read_line(line_, [&](error_code e2, size_t n) {
          if (e2) return fail("no greeting from the node: " + e2.message());
          const std::string g = take_line(line_, n);
          if (g.rfind(kGreeting, 0) != 0) return fail("not a kevolve node (it greeted '" + g.substr(0, 40) + "')");
          proof_ = role + " " + prove(secret, g.substr(std::string(kGreeting).size()), role) + "\n";
          stream_->write(asio::buffer(proof_), [&](error_code e3, size_t) {
            if (e3) return fail("connection lost: " + e3.message());
            stream_->read_line(line_, [&](error_code e4, size_t n4) {
              if (e4) return fail("no answer to the proof: " + e4.message());
              const std::string answer = take_line(line_, n4);
              if (answer != "OK") {
                refused = true;
                return fail(answer.rfind("NO ", 0) == 0 ? answer.substr(3)
                                                        : "unexpected answer '" + answer.substr(0, 40) + "'");
              }
              finished = true;
            });
          });
        });
      };
      if (!stream_->tls()) return greet();
      stream_->secure().async_handshake(ssl::stream_base::client, [&, greet](error_code e2) {
        if (e2) return fail("TLS handshake failed: " + e2.message());
        greet();
      });
    });
    io_.run_for(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(timeout_s)));
    if (!finished) {
      stream_->close();
      return "no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
    }
    if (!error.empty()) return error;
    io_.restart();
    acceptor_.open(tcp::v4());
    acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen(1);
    port_ = acceptor_.local_endpoint().port();
    acceptor_.async_accept([this](error_code e, tcp::socket s) {
      error_code ignored;
      acceptor_.close(ignored);  // one connection: CAF's
      if (e) return stream_->close();
      // Bytes the node sent right behind its OK (CAF's side speaks first) go to CAF before the rest.
      relay(stream_, std::make_shared<Stream>(std::move(s)), rest_of(line_));
    });
    thread_ = std::thread([this] { io_.run(); });
    return {};
  }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  ssl::context tls_;
  std::shared_ptr<Stream> stream_;
  asio::streambuf line_{kMaxLine};
  std::string proof_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace

Expected<std::unique_ptr<FrontDoor>> open_front_door(const DoorOptions& o) {
  using R = Expected<std::unique_ptr<FrontDoor>>;
  auto d = std::make_unique<Door>(o);
  if (auto e = d->start(); !e.empty())
    return R::failure("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + e);
  return std::unique_ptr<FrontDoor>(std::move(d));
}

Expected<std::unique_ptr<Tunnel>> open_tunnel(const std::string& host, uint16_t port, const std::string& secret,
                                              const std::string& role, const DoorTls& tls, double timeout_s,
                                              TunnelError* why) {
  using R = Expected<std::unique_ptr<Tunnel>>;
  auto t = std::make_unique<ClientTunnel>();
  bool refused = false;
  if (auto e = t->open(host, port, secret, role, tls, timeout_s, refused); !e.empty()) {
    if (why) *why = {e, refused};
    return R::failure((refused ? "refused by " : "cannot reach ") + host + ":" + std::to_string(port) + ": " + e);
  }
  return std::unique_ptr<Tunnel>(std::move(t));
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  error_code ec;
  const auto a = asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

}  // namespace kevolve::cluster
