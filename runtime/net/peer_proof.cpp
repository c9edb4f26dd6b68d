#include "runtime/net/peer_proof.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace kevolve::net {

std::string to_hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

std::string make_nonce() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("no random bytes from OpenSSL for the cluster handshake");
  return to_hex(std::string(reinterpret_cast<char*>(b), sizeof b));
}

std::string proof(const std::string& key, const char* side, const std::string& role, const std::string& node_nonce,
                  const std::string& peer_nonce, const std::string& binding) {
  const std::string msg = std::string("kevolve-cluster-2|") + side + "|" + role + "|" + node_nonce + "|" + peer_nonce +
                          "|" + to_hex(binding);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), mac, &len);
  return to_hex(std::string(reinterpret_cast<char*>(mac), len));
}

bool proof_ok(const std::string& mac, const std::string& key, const char* side, const std::string& role,
              const std::string& node_nonce, const std::string& peer_nonce, const std::string& binding) {
  const std::string want = proof(key, side, role, node_nonce, peer_nonce, binding);
  return mac.size() == want.size() && CRYPTO_memcmp(mac.data(), want.data(), want.size()) == 0;
}

}  // namespace kevolve::net

#include <cctype>
#include <cstdlib>

namespace kevolve::net {

KeyResult key_from_env(const std::string& var) {
  const char* v = std::getenv(var.c_str());
  if (!v || !*v) return {"", "environment variable " + var + " is not set"};
  if (std::string(v).size() < 16) return {"", "the key in " + var + " is shorter than 16 characters"};
  return {v, ""};
}

}  // namespace kevolve::net

namespace kevolve::net {

std::string hmac_hex(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &len);
  return to_hex(std::string(reinterpret_cast<char*>(mac), len));
}

}  // namespace kevolve::net

namespace kevolve::net {

std::string host_key(const std::string& evaluator_key, const std::string& host) {
  return hmac_hex(evaluator_key, "kevolve-host-key|" + host);
}

bool valid_host_name(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  return true;
}

EvaluatorCredential evaluator_credential(const std::string& value, const std::string& default_host) {
  if (value.rfind("host:", 0) == 0) {
    const size_t colon = value.find(':', 5);
    if (colon == std::string::npos) return {"", "", "a host key reads host:NAME:KEY"};
    EvaluatorCredential c{value.substr(5, colon - 5), value.substr(colon + 1), ""};
    if (!valid_host_name(c.host)) return {"", "", "the host key names no valid host ('" + c.host + "')"};
    if (c.key.size() < 16) return {"", "", "the host key is shorter than 16 characters"};
    return c;
  }
  if (!valid_host_name(default_host)) return {"", "", "this machine's name '" + default_host + "' cannot be keyed"};
  return {default_host, host_key(value, default_host), ""};
}

}  // namespace kevolve::net
