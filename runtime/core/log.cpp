#include "runtime/core/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kevolve::log {

Level threshold() {
  static const Level level = [] {
    const char* e = std::getenv("KEVOLVE_LOG");
    if (!e) return Level::info;
    if (!std::strcmp(e, "error")) return Level::error;
    if (!std::strcmp(e, "warn")) return Level::warn;
    if (!std::strcmp(e, "debug")) return Level::debug;
    return Level::info;
  }();
  return level;
}

void write(Level level, std::string_view component, std::string_view message) {
  if (!enabled(level)) return;
  std::string line = "kevolve";
  if (!component.empty()) line.append(" ").append(component);
  line.append(": ").append(message);
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {  // one write(2) unless the pipe takes less; a short write goes on where it stopped
    const ssize_t n = ::write(2, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace kevolve::log
