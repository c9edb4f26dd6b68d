#include "runtime/net/cluster_link.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <openssl/ssl.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>
#include <list>
#include <map>
#include <mutex>
#include <atomic>
#include <thread>

#include "runtime/net/peer_proof.hpp"
#include "runtime/core/log.hpp"

namespace kevolve::net {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using IoPtr = std::shared_ptr<asio::io_context>;

constexpr const char* kGreeting = "KEVOLVE-CLUSTER 2 ";
constexpr size_t kMaxLine = 512;  // a handshake line: role, nonce, proof

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

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
  // Keying material of this TLS session (RFC 5705), the same on both ends of this connection only; "" in
  // plain mode.
  std::string binding() {
    if (!secure_) return {};
    unsigned char out[32];
    static const char label[] = "EXPORTER-kevolve-cluster";
    if (SSL_export_keying_material(secure_->native_handle(), out, sizeof out, label, sizeof label - 1, nullptr, 0,
                                   0) != 1)
      return "unavailable";  // both sides then disagree with a peer that has it: the proof fails, never passes
    return std::string(reinterpret_cast<char*>(out), sizeof out);
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

void load_tls(ssl::context& ctx, const LinkTls& t) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx.use_certificate_chain_file(t.cert);
  ctx.use_private_key_file(t.key, ssl::context::pem);
  ctx.load_verify_file(t.ca);
  ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
}

bool hex32(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string frame_bytes(uint8_t kind, const std::string& payload) {
  const uint32_t len = static_cast<uint32_t>(payload.size() + 1);
  std::string f(5, '\0');
  for (int i = 0; i < 4; ++i) f[static_cast<size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xff);
  f[4] = static_cast<char>(kind);
  f += payload;
  return f;
}

// At most `per_s` lines a second (bursts of 2x); the rest are counted and the count rides on the next line.
class LogGate {
 public:
  LogGate(std::function<void(const std::string&)> sink, double per_s) : sink_(std::move(sink)), per_s_(per_s) {}
  void line(const std::string& text) {
    const auto now = Clock::now();
    tokens_ = std::min(2 * per_s_, tokens_ + std::chrono::duration<double>(now - last_).count() * per_s_);
    last_ = now;
    if (tokens_ < 1) {
      ++suppressed_;
      return;
    }
    tokens_ -= 1;
    std::string s = text;
    if (suppressed_) s += " (" + std::to_string(suppressed_) + " similar lines not shown)";
    suppressed_ = 0;
    sink_(s);
  }

 private:
  std::function<void(const std::string&)> sink_;
  double per_s_, tokens_ = 0;
  Clock::time_point last_{};
  int64_t suppressed_ = 0;
};

// One authenticated connection, on its I/O context's thread.
class LinkImpl : public Link, public std::enable_shared_from_this<LinkImpl> {
 public:
  LinkImpl(IoPtr io, std::shared_ptr<Stream> s, Role role, std::string host, std::string peer, LinkLimits lim,
           std::function<void()> on_end)
      : io_(std::move(io)), stream_(std::move(s)), role_(role), host_(std::move(host)), peer_(std::move(peer)), lim_(lim),
        on_end_(std::move(on_end)), beat_(*io_), drain_(*io_) {}

  // On the I/O thread. `pending`: bytes that arrived behind the handshake.
  void start(LinkHandlers h, std::string pending) {
    handlers_ = std::move(h);
    last_recv_ = Clock::now();
    error_code ignored;
    stream_->socket().set_option(tcp::no_delay(true), ignored);
    in_ = std::move(pending);
    parse();
    if (!ended_) read();
    heartbeat();
  }

  Role role() const override { return role_; }
  const std::string& peer() const override { return peer_; }
  const std::string& host() const override { return host_; }

  bool send(uint8_t kind, std::string payload) override {
    if (kind == kHeartbeatFrame) return false;
    return enqueue(frame_bytes(kind, payload));
  }

  void close(const std::string& why) override {
    asio::post(*io_, [self = shared_from_this(), why] { self->begin_close(why); });
  }

 private:
  bool enqueue(std::string frame) {
    if (closed_) return false;
    bool overflow = false;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (queued_ + frame.size() > lim_.max_queued_bytes)
        overflow = true;
      else {
        queued_ += frame.size();
        out_.push_back(std::move(frame));
      }
    }
    if (overflow) {
      asio::post(*io_, [self = shared_from_this()] {
        self->end("more than " + std::to_string(self->lim_.max_queued_bytes >> 20) + " MiB waiting to be written");
      });
      return false;
    }
    asio::post(*io_, [self = shared_from_this()] { self->write_next(); });
    return true;
  }

  void read() {
    stream_->read_some(asio::buffer(chunk_), [self = shared_from_this()](error_code ec, size_t n) {
      if (self->ended_) return;
      if (ec) return self->end(ec == asio::error::eof ? "the other side closed the connection" : ec.message());
      self->last_recv_ = Clock::now();
      self->in_.append(self->chunk_.data(), n);
      self->parse();
      if (!self->ended_) self->read();
    });
  }

  // Delivers every whole frame in in_. The length is checked before the frame is waited for, so a header
  // announcing gigabytes costs nothing but the connection.
  void parse() {
    size_t pos = 0;
    while (!ended_ && in_.size() - pos >= 4) {
      uint32_t len = 0;
      for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(static_cast<unsigned char>(in_[pos + i])) << (8 * i);
      if (len == 0 || len > lim_.max_frame_bytes + 1u) {
        in_.clear();
        return end("a frame of " + std::to_string(len) + " bytes (limit " + std::to_string(lim_.max_frame_bytes) +
                   ")");
      }
      if (in_.size() - pos - 4 < len) break;
      const uint8_t kind = static_cast<uint8_t>(in_[pos + 4]);
      std::string payload = in_.substr(pos + 5, len - 1);
      pos += 4 + len;
      if (kind != kHeartbeatFrame && handlers_.on_frame) handlers_.on_frame(kind, std::move(payload));
    }
    in_.erase(0, pos);
    if (in_.capacity() > (1u << 20) && in_.size() < (64u << 10)) in_.shrink_to_fit();
  }

  void write_next() {
    if (writing_ || ended_) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (out_.empty()) {
        if (closing_) {
          lock_guard_release();
          return;
        }
        return;
      }
      current_ = std::move(out_.front());
      out_.pop_front();
    }
    writing_ = true;
    stream_->write(asio::buffer(current_), [self = shared_from_this()](error_code ec, size_t) {
      self->writing_ = false;
      {
        std::lock_guard<std::mutex> lock(self->m_);
        self->queued_ -= self->current_.size();
      }
      self->current_.clear();
      self->current_.shrink_to_fit();
      if (ec) return self->end("cannot write: " + ec.message());
      self->write_next();
    });
  }

  // The queue has drained while closing: end now (posted so the lock above is released first).
  void lock_guard_release() {
    asio::post(*io_, [self = shared_from_this()] { self->end(self->close_reason_); });
  }

  void begin_close(const std::string& why) {
    if (ended_ || closing_) return;
    closing_ = true;
    closed_ = true;
    close_reason_ = why;
    bool idle;
    {
      std::lock_guard<std::mutex> lock(m_);
      idle = out_.empty();
    }
    if (idle && !writing_) return end(why);
    drain_.expires_after(std::chrono::seconds(1));
    drain_.async_wait([self = shared_from_this(), why](error_code ec) {
      if (!ec) self->end(why);
    });
  }

  void heartbeat() {
    if (ended_) return;
    const double silent = std::chrono::duration<double>(Clock::now() - last_recv_).count();
    if (silent > lim_.heartbeat_s * lim_.missed)
      return end("no heartbeat for " + std::to_string(static_cast<int>(silent)) + " s");
    enqueue(frame_bytes(kHeartbeatFrame, {}));
    beat_.expires_after(seconds(lim_.heartbeat_s));
    beat_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->heartbeat();
    });
  }

  void end(const std::string& why) {
    if (ended_) return;
    ended_ = closed_ = true;
    beat_.cancel();
    drain_.cancel();
    stream_->close();
    {
      std::lock_guard<std::mutex> lock(m_);
      out_.clear();
      queued_ = 0;
    }
    auto h = std::move(handlers_);
    handlers_ = {};
    if (h.on_close) h.on_close(why);
    if (on_end_) on_end_();
    on_end_ = nullptr;
  }

  IoPtr io_;
  std::shared_ptr<Stream> stream_;
  Role role_;
  std::string host_, peer_;
  LinkLimits lim_;
  std::function<void()> on_end_;
  LinkHandlers handlers_;
  asio::steady_timer beat_, drain_;
  std::array<char, 64 * 1024> chunk_{};
  std::string in_, current_, close_reason_;
  Clock::time_point last_recv_;
  std::mutex m_;
  std::deque<std::string> out_;
  size_t queued_ = 0;
  bool writing_ = false, closing_ = false, ended_ = false;
  std::atomic<bool> closed_{false};
};

class Door : public Listener {
 public:
  explicit Door(ListenOptions o)
      : o_(std::move(o)), io_(std::make_shared<asio::io_context>()), acceptor_(*io_), retry_(*io_),
        tls_(ssl::context::tls),
        log_(o_.log ? o_.log : [](const std::string& s) { log::warn("") << s; }, 10) {}
  // Links still open get up to 2 s to end (a link closing gracefully writes its last frames first, e.g.
  // the node's "finished" to each evaluator), then every connection is cut.
  ~Door() override {
    const auto until = Clock::now() + std::chrono::seconds(2);
    while (links_.load() > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    io_->stop();
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
    thread_ = std::thread([io = io_] { io->run(); });
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
    std::list<std::weak_ptr<Session>>::iterator place;
    explicit Session(asio::io_context& io) : deadline(io) {}
  };

  void accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket s) {
      if (!acceptor_.is_open()) return;
      if (ec) {
        // Out of file descriptors (or another transient error): wait a little instead of spinning.
        log_.line("kevolve node: cannot accept a connection: " + ec.message());
        retry_.expires_after(std::chrono::milliseconds(50));
        retry_.async_wait([this](error_code e) {
          if (!e) accept();
        });
        return;
      }
      serve(std::move(s));
      accept();
    });
  }

  // Token bucket per peer address: handshakes_per_s, burst twice that.
  bool admit(const std::string& ip) {
    if (buckets_.size() > 65536) buckets_.clear();  // bounded under a flood of addresses
    auto& b = buckets_[ip];
    const auto now = Clock::now();
    const double cap = 2 * o_.handshakes_per_s;
    if (b.last == Clock::time_point{}) b.tokens = cap;
    b.tokens = std::min(cap, b.tokens + std::chrono::duration<double>(now - b.last).count() * o_.handshakes_per_s);
    b.last = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  void forget(const std::shared_ptr<Session>& s) {
    if (s->done) return;
    s->done = true;
    s->deadline.cancel();
    waiting_.erase(s->place);
  }

  void refuse(const std::shared_ptr<Session>& s, const std::string& why, bool tell) {
    if (s->done) return;
    forget(s);
    log_.line("kevolve node: refused a connection from " + s->peer + ": " + why);
    if (!tell) return s->stream->close();
    auto text = std::make_shared<std::string>("NO " + why + "\n");
    s->stream->write(asio::buffer(*text), [s, text](error_code, size_t) { s->stream->close(); });
  }

  void serve(tcp::socket sock) {
    error_code ec;
    const auto remote = sock.remote_endpoint(ec);
    const std::string ip = ec ? "unknown" : remote.address().to_string();
    if (!admit(ip)) {
      log_.line("kevolve node: refused a connection from " + ip + ": too many handshakes from this address");
      sock.close(ec);
      return;
    }
    if (links_ >= o_.max_links) {
      log_.line("kevolve node: refused a connection from " + ip + ": " + std::to_string(links_) +
                " connections are open already");
      sock.close(ec);
      return;
    }
    if (waiting_.size() >= o_.max_unauthenticated) {
      // The oldest connection still without a proof makes room: a legitimate peer proves itself in
      // milliseconds, so only idle connections grow old here.
      if (auto oldest = waiting_.front().lock()) refuse(oldest, "still no proof while newer connections wait", false);
    }
    auto s = std::make_shared<Session>(*io_);
    s->peer = ec ? ip : ip + ":" + std::to_string(remote.port());
    s->stream =
        o_.tls.on() ? std::make_shared<Stream>(std::move(sock), tls_) : std::make_shared<Stream>(std::move(sock));
    s->place = waiting_.insert(waiting_.end(), s);
    s->deadline.expires_after(seconds(o_.handshake_timeout_s));
    s->deadline.async_wait([this, s](error_code e) {
      if (!e)
        refuse(s, "no proof within " + std::to_string(static_cast<int>(o_.handshake_timeout_s)) + " s", false);
    });
    if (!s->stream->tls()) return challenge(s);
    s->stream->secure().async_handshake(ssl::stream_base::server, [this, s](error_code e) {
      if (e) return refuse(s, "TLS handshake failed: " + e.message(), false);
      challenge(s);
    });
  }

  void challenge(const std::shared_ptr<Session>& s) {
    if (s->done) return;
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
    if (s->done) return;
    const size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
    const std::string role_text = line.substr(0, a);
    // "console", or "evaluator:<host>": an evaluator proves the key of the host it names.
    const size_t colon = role_text.find(':');
    const std::string host = colon == std::string::npos ? "" : role_text.substr(colon + 1);
    const auto role = parse_role(role_text.substr(0, colon));
    if (!role) return refuse(s, "unknown role '" + escaped(role_text, 32) + "'", true);
    if (*role == Role::evaluator && !valid_host_name(host))
      return refuse(s, "an evaluator names its host (evaluator:<host>), not '" + escaped(role_text, 64) + "'", true);
    if (*role == Role::console && colon != std::string::npos)
      return refuse(s, "unknown role '" + escaped(role_text, 32) + "'", true);
    if (o_.keys.of(*role).empty())
      return refuse(s, std::string("this node takes no ") + role_name(*role) + " connections", true);
    const std::string key = *role == Role::evaluator ? host_key(o_.keys.evaluator, host) : o_.keys.console;
    const std::string peer_nonce = b == std::string::npos ? "" : line.substr(a + 1, b - a - 1);
    const std::string mac = b == std::string::npos ? "" : line.substr(b + 1);
    const std::string binding = s->stream->binding();
    if (!hex32(peer_nonce) || !proof_ok(mac, key, "peer", role_text, s->nonce, peer_nonce, binding))
      return refuse(s,
                    std::string("wrong proof of the ") + role_name(*role) + " key" +
                        (host.empty() ? "" : " of host " + host),
                    true);
    forget(s);
    auto ok = std::make_shared<std::string>("OK " + proof(key, "node", role_text, s->nonce, peer_nonce, binding) + "\n");
    auto pending = std::make_shared<std::string>(rest_of(s->line));
    ++links_;
    s->stream->write(asio::buffer(*ok), [this, s, ok, pending, r = *role, host](error_code e, size_t) {
      if (e) {
        --links_;
        return s->stream->close();
      }
      auto link = std::make_shared<LinkImpl>(io_, s->stream, r, host, s->peer, o_.limits, [this] { --links_; });
      LinkHandlers h = o_.on_link ? o_.on_link(link) : LinkHandlers{};
      link->start(std::move(h), *pending);
    });
  }

  struct Bucket {
    double tokens = 0;
    Clock::time_point last{};
  };

  ListenOptions o_;
  IoPtr io_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  ssl::context tls_;
  LogGate log_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::atomic<size_t> links_{0};  // authenticated links not yet ended (changed on the I/O thread)
  std::map<std::string, Bucket> buckets_;
  std::list<std::weak_ptr<Session>> waiting_;  // unauthenticated, oldest first
};

// A client's link: the link itself plus the I/O thread that serves it.
class ClientLink : public Link {
 public:
  ClientLink(IoPtr io, std::shared_ptr<LinkImpl> impl) : io_(std::move(io)), impl_(std::move(impl)) {
    guard_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(io_->get_executor());
    thread_ = std::thread([io = io_] { io->run(); });
  }
  ~ClientLink() override {
    impl_->close("closed by this process");
    guard_.reset();
    io_->stop();
    if (thread_.get_id() == std::this_thread::get_id())
      thread_.detach();
    else if (thread_.joinable())
      thread_.join();
  }
  Role role() const override { return impl_->role(); }
  const std::string& peer() const override { return impl_->peer(); }
  const std::string& host() const override { return impl_->host(); }
  bool send(uint8_t kind, std::string payload) override { return impl_->send(kind, std::move(payload)); }
  void close(const std::string& why) override { impl_->close(why); }

 private:
  IoPtr io_;
  std::shared_ptr<LinkImpl> impl_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::thread thread_;
};

}  // namespace

const char* role_name(Role r) { return r == Role::evaluator ? "evaluator" : "console"; }

std::optional<Role> parse_role(const std::string& s) {
  if (s == "evaluator") return Role::evaluator;
  if (s == "console") return Role::console;
  return std::nullopt;
}

std::string escaped(const std::string& s, size_t max) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  return out;
}

Expected<std::unique_ptr<Listener>> listen(ListenOptions o) {
  using R = Expected<std::unique_ptr<Listener>>;
  const std::string where = o.host + ":" + std::to_string(o.port);
  auto d = std::make_unique<Door>(std::move(o));
  if (auto e = d->start(); !e.empty()) return R::failure("cannot listen on " + where + ": " + e);
  return std::unique_ptr<Listener>(std::move(d));
}

Expected<std::shared_ptr<Link>> connect(const ConnectOptions& o, LinkHandlers h, ConnectError* why) {
  using R = Expected<std::shared_ptr<Link>>;
  const std::string where = o.host + ":" + std::to_string(o.port);
  auto io = std::make_shared<asio::io_context>();
  auto tls = std::make_shared<ssl::context>(ssl::context::tls);
  auto fail = [&](const std::string& text, bool refused, bool impostor) {
    if (why) *why = {text, refused, impostor};
    return R::failure((refused ? "refused by " : impostor ? "not our node at " : "cannot reach ") + where + ": " + text);
  };
  try {
    if (o.tls.on()) load_tls(*tls, o.tls);
  } catch (const std::exception& e) { return fail(std::string("TLS files: ") + e.what(), false, false); }
  error_code ec;
  tcp::resolver resolver(*io);
  auto endpoints = resolver.resolve(o.host, std::to_string(o.port), ec);
  if (ec) return fail("cannot resolve " + o.host + ": " + ec.message(), false, false);
  auto stream =
      o.tls.on() ? std::make_shared<Stream>(tcp::socket(*io), *tls) : std::make_shared<Stream>(tcp::socket(*io));
  if (o.tls.on())
    stream->secure().set_verify_callback(
        ssl::host_name_verification(o.tls.server_name.empty() ? o.host : o.tls.server_name));
  asio::streambuf line(kMaxLine);
  std::string error, proof_line;
  bool finished = false, refused = false, impostor = false;
  const std::string role =
      o.role == Role::evaluator ? std::string(role_name(o.role)) + ":" + o.host_name : role_name(o.role);
  const std::string peer_nonce = make_nonce();
  auto failed = [&](const std::string& e) {
    error = e;
    finished = true;
  };
  asio::async_connect(stream->socket(), endpoints, [&](error_code e, const tcp::endpoint&) {
    if (e) return failed("cannot connect: " + e.message());
    auto greet = [&] {
      stream->read_line(line, [&](error_code e2, size_t n) {
        if (e2) return failed("no greeting from the node: " + e2.message());
        const std::string g = take_line(line, n);
        if (g.rfind(kGreeting, 0) != 0) {
          impostor = true;
          return failed("not a kevolve node of this version (it greeted '" + escaped(g, 40) + "')");
        }
        const std::string node_nonce = g.substr(std::string(kGreeting).size());
        if (!hex32(node_nonce)) {
          impostor = true;
          return failed("a malformed greeting");
        }
        const std::string binding = stream->binding();
        proof_line = role + " " + peer_nonce + " " + proof(o.key, "peer", role, node_nonce, peer_nonce, binding) + "\n";
        stream->write(asio::buffer(proof_line), [&, node_nonce, binding](error_code e3, size_t) {
          if (e3) return failed("connection lost: " + e3.message());
          stream->read_line(line, [&, node_nonce, binding](error_code e4, size_t n4) {
            if (e4) return failed("no answer to the proof: " + e4.message());
            const std::string answer = take_line(line, n4);
            if (answer.rfind("NO ", 0) == 0) {
              refused = true;
              return failed(escaped(answer.substr(3), 200));
            }
            if (answer.rfind("OK ", 0) != 0 ||
                !proof_ok(answer.substr(3), o.key, "node", role, node_nonce, peer_nonce, binding)) {
              impostor = true;
              return failed(std::string("it could not prove the ") + role_name(o.role) +
                            " key; nothing was sent to it");
            }
            finished = true;
          });
        });
      });
    };
    if (!stream->tls()) return greet();
    stream->secure().async_handshake(ssl::stream_base::client, [&, greet](error_code e2) {
      if (e2) return failed("TLS handshake failed: " + e2.message());
      greet();
    });
  });
  io->run_for(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(o.timeout_s)));
  if (!finished) {
    stream->close();
    return fail("no answer within " + std::to_string(static_cast<int>(o.timeout_s)) + " s", false, false);
  }
  if (!error.empty()) {
    stream->close();
    return fail(error, refused, impostor);
  }
  io->restart();
  auto impl = std::make_shared<LinkImpl>(io, stream, o.role, o.host_name, where, o.limits, nullptr);
  const std::string pending = rest_of(line);
  asio::post(*io, [impl, h = std::move(h), pending, tls]() mutable { impl->start(std::move(h), pending); });
  return std::shared_ptr<Link>(std::make_shared<ClientLink>(io, impl));
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  error_code ec;
  const auto a = asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

}  // namespace kevolve::net
