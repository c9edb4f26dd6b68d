// A minimal Chrome DevTools Protocol client for the browser test: an interactive headless Chromium
// (--remote-debugging-port=0) driven over its WebSocket like a user — evaluate an expression in the page,
// press and release the mouse at a point (hit-tested by the browser, as a real click). Hand-written
// WebSocket framing (RFC 6455: masked client frames, text messages, continuation frames) over a loopback
// socket, so the test needs no WebSocket library.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>

#include "runtime/core/json.hpp"
#include "tests/actors/dashboard/dashboard_test_helpers.hpp"

namespace kevolve::dashboard_test {

class Cdp {
 public:
  Cdp() = default;
  Cdp(const Cdp&) = delete;
  Cdp& operator=(const Cdp&) = delete;
  ~Cdp() {
    if (fd_ >= 0) close(fd_);
  }

  // Opens the WebSocket at ws://127.0.0.1:port/path (a page's webSocketDebuggerUrl). False on failure.
  bool connect_to(uint16_t port, const std::string& path) {
    fd_ = connect_loopback(port);
    if (fd_ < 0) return false;
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: a2V2b2x2ZS1jZHAtdGVzdA==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    if (send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return false;
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && recv(fd_, &c, 1, 0) == 1) head += c;
    return head.rfind("HTTP/1.1 101", 0) == 0;
  }

  // Sends one command and returns its answer (the JSON message with its id), "" when none came in time.
  std::string call(const std::string& method, const std::string& params_json) {
    const int id = ++next_;
    if (!send_text("{\"id\":" + std::to_string(id) + ",\"method\":\"" + method + "\",\"params\":" + params_json + "}"))
      return "";
    const std::string tag = "\"id\":" + std::to_string(id) + ",";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string m;
    while (std::chrono::steady_clock::now() < deadline && read_message(m))
      if (m.rfind("{" + tag, 0) == 0) return m;  // events and other answers are skipped
    return "";
  }

  // The value of a JavaScript expression in the page, as a string (String(value)); "error: ..." when it
  // threw, "" when the page did not answer.
  std::string eval(const std::string& js) {
    const std::string wrapped = "(function(){try{return String(" + js + ");}catch(e){return 'error: '+e;}})()";
    const std::string a =
        call("Runtime.evaluate", "{\"expression\":" + json_string(wrapped) + ",\"returnByValue\":true}");
    const std::string key = "\"value\":\"";
    const size_t at = a.find(key);
    return at == std::string::npos ? "" : json_unescape(a, at + key.size());
  }

  // A left click at (x, y) in CSS pixels of the viewport: pressed and released, as a user's.
  bool click(double x, double y) {
    const std::string at =
        ",\"x\":" + std::to_string(x) + ",\"y\":" + std::to_string(y) + ",\"button\":\"left\",\"clickCount\":1}";
    return !call("Input.dispatchMouseEvent", "{\"type\":\"mousePressed\"" + at).empty() &&
           !call("Input.dispatchMouseEvent", "{\"type\":\"mouseReleased\"" + at).empty();
  }

  static std::string json_string(const std::string& s) { return json::quote(s); }

 private:
  // A JSON string's contents from `at` (just past its opening quote) to its closing quote, unescaped
  // (\uXXXX outside ASCII becomes '?': the test compares ASCII text).
  static std::string json_unescape(const std::string& s, size_t at) {
    std::string o;
    for (size_t i = at; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] != '\\' || i + 1 >= s.size()) {
        o += s[i];
        continue;
      }
      const char e = s[++i];
      if (e == 'n')
        o += '\n';
      else if (e == 't')
        o += '\t';
      else if (e == 'r')
        o += '\r';
      else if (e == 'u' && i + 4 < s.size()) {
        const int v = std::stoi(s.substr(i + 1, 4), nullptr, 16);
        o += v < 128 ? static_cast<char>(v) : '?';
        i += 4;
      } else
        o += e;
    }
    return o;
  }

  bool send_text(const std::string& payload) {
    std::string f;
    f += static_cast<char>(0x81);  // final fragment, text
    const size_t n = payload.size();
    if (n < 126) {
      f += static_cast<char>(0x80 | n);
    } else if (n < 65536) {
      f += static_cast<char>(0x80 | 126);
      f += static_cast<char>(n >> 8);
      f += static_cast<char>(n & 0xff);
    } else {
      f += static_cast<char>(0x80 | 127);
      for (int i = 7; i >= 0; --i) f += static_cast<char>((n >> (8 * i)) & 0xff);
    }
    unsigned char mask[4];
    for (auto& m : mask) m = static_cast<unsigned char>(rng_());
    f.append(reinterpret_cast<char*>(mask), 4);
    for (size_t i = 0; i < n; ++i) f += static_cast<char>(payload[i] ^ mask[i % 4]);
    return send(fd_, f.data(), f.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(f.size());
  }

  bool read_exact(char* p, size_t n) {
    while (n > 0) {
      const ssize_t r = recv(fd_, p, n, 0);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }

  // One whole message (fragments joined); pings and other control frames are skipped.
  bool read_message(std::string& out) {
    out.clear();
    for (;;) {
      unsigned char h[2];
      if (!read_exact(reinterpret_cast<char*>(h), 2)) return false;
      uint64_t n = h[1] & 0x7f;
      if (n >= 126) {
        unsigned char x[8];
        const size_t k = n == 126 ? 2 : 8;
        if (!read_exact(reinterpret_cast<char*>(x), k)) return false;
        n = 0;
        for (size_t i = 0; i < k; ++i) n = (n << 8) | x[i];
      }
      std::string payload(n, '\0');
      if (n && !read_exact(payload.data(), n)) return false;
      const int op = h[0] & 0x0f;
      if (op == 0x8) return false;  // closed
      if (op >= 0x8) continue;      // ping / pong
      out += payload;
      if (h[0] & 0x80) return true;  // final fragment
    }
  }

  int fd_ = -1;
  int next_ = 0;
  std::mt19937 rng_{12345};
};

}  // namespace kevolve::dashboard_test
