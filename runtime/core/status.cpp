#include "runtime/core/status.hpp"

namespace kevolve {

const char* errc_name(Errc c) {
  switch (c) {
    case Errc::ok:
      return "ok";
    case Errc::failed:
      return "failed";
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::not_found:
      return "not_found";
    case Errc::corrupt:
      return "corrupt";
    case Errc::io:
      return "io";
    case Errc::unavailable:
      return "unavailable";
    case Errc::busy:
      return "busy";
    case Errc::timeout:
      return "timeout";
  }
  return "failed";
}

std::string Status::text() const {
  if (ok()) return "ok";
  if (code == Errc::failed) return message;
  return std::string(errc_name(code)) + ": " + message;
}

}  // namespace kevolve
