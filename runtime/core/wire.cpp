#include "runtime/core/wire.hpp"

#include <cerrno>
#include <unistd.h>

namespace kevolve::wire {

bool read_full(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* p, size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t r = ::write(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_frame(int fd, const std::vector<char>& payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  return write_full(fd, &n, 4) && write_full(fd, payload.data(), payload.size());
}

std::optional<std::vector<char>> read_frame(int fd, uint32_t max_bytes) {
  uint32_t n = 0;
  if (!read_full(fd, &n, 4) || n > max_bytes) return std::nullopt;
  std::vector<char> b(n);
  if (!read_full(fd, b.data(), n)) return std::nullopt;
  return b;
}

}  // namespace kevolve::wire
