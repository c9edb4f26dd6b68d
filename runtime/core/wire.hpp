// The worker protocol's byte layer: length-prefixed frames over pipes, and a tiny binary codec.
// No CAF and no libtorch: workers built on GPU nodes link only this.
// Frame = u32 little-endian payload length, then the payload. Values are fixed-width little-endian.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kevolve::wire {

class Writer {
 public:
  void u32(uint32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) {
    buf_.insert(buf_.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  }
  const std::vector<char>& bytes() const { return buf_; }

 private:
  std::vector<char> buf_;
};

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Reader {
 public:
  explicit Reader(const std::vector<char>& b) : b_(b) {}
  uint32_t u32() {
    uint32_t v;
    raw(&v, 4);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, 8);
    return v;
  }
  double f64() {
    double v;
    raw(&v, 8);
    return v;
  }
  std::string str() {
    const uint32_t n = u32();
    need(n);
    std::string s(b_.data() + pos_, n);
    pos_ += n;
    return s;
  }
  void raw(void* p, size_t n) {
    need(n);
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }
  // A container's element count. Every element takes at least `min_bytes` bytes, so a count the rest of
  // the message cannot hold is a DecodeError — a damaged count never allocates what the bytes cannot fill.
  uint32_t count(size_t min_bytes = 1) {
    const uint32_t n = u32();
    if (static_cast<uint64_t>(n) * min_bytes > b_.size() - pos_) throw DecodeError("element count beyond the message");
    return n;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  void need(size_t n) const {
    if (pos_ + n > b_.size()) throw DecodeError("truncated message");
  }
  const std::vector<char>& b_;
  size_t pos_ = 0;
};

// Writes one frame; false if the peer is gone.
bool write_frame(int fd, const std::vector<char>& payload);
// Reads one frame; nullopt on end of stream or error. Frames above max_bytes are refused.
std::optional<std::vector<char>> read_frame(int fd, uint32_t max_bytes = 256u << 20);
// Reads/writes exactly n bytes (retrying on EINTR); false on EOF or error.
bool read_full(int fd, void* p, size_t n);
bool write_full(int fd, const void* p, size_t n);

}  // namespace kevolve::wire
