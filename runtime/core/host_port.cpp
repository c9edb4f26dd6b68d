#include "runtime/core/host_port.hpp"

namespace kevolve {

Expected<std::pair<std::string, uint16_t>> parse_host_port(const std::string& a, bool allow_any_port) {
  using R = Expected<std::pair<std::string, uint16_t>>;
  const auto colon = a.rfind(':');
  const bool shaped = colon != std::string::npos && colon != 0 && colon + 1 < a.size() && a.size() - colon <= 6 &&
                      a.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  const long port = shaped ? std::stol(a.substr(colon + 1)) : -1;
  if (!shaped || port > 65535 || (port == 0 && !allow_any_port))
    return R::failure("'" + a + "' (expected HOST:PORT, e.g. 127.0.0.1:7411" +
                      (allow_any_port ? "; port 0 picks a free one" : "") + ")");
  return R({a.substr(0, colon), static_cast<uint16_t>(port)});
}

}  // namespace kevolve
