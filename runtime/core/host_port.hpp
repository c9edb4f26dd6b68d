// "HOST:PORT" addresses of the cluster (the node's [cluster] listen, an evaluator's --join, the console's
// argument), parsed in one place.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/core/expected.hpp"

namespace kevolve {

// Splits "HOST:PORT". Port 0 ("any free port") only where `allow_any_port` (a listening address). Fails
// with a message that quotes the text and says what was expected.
Expected<std::pair<std::string, uint16_t>> parse_host_port(const std::string& address, bool allow_any_port = false);

}  // namespace kevolve
