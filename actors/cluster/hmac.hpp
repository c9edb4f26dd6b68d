// The shared-secret proof of the cluster's gatekeeper: HMAC-SHA256 over a single-use challenge.
// Pure functions (OpenSSL inside); no actors.
#pragma once
#include <string>

namespace kevolve::cluster {

// 16 random bytes from the system's CSPRNG, as 32 hex digits.
std::string make_nonce();

// hex(HMAC-SHA256(secret, nonce + "|" + role)).
std::string prove(const std::string& secret, const std::string& nonce, const std::string& role);

// Whether `mac` is the proof of `secret` for nonce and role (constant-time comparison).
bool verify(const std::string& secret, const std::string& nonce, const std::string& role, const std::string& mac);

}  // namespace kevolve::cluster
