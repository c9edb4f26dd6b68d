#include "actors/cluster/hmac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace kevolve::cluster {
namespace {

std::string hex(const unsigned char* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

}  // namespace

std::string make_nonce() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("no random bytes from OpenSSL for the cluster challenge");
  return hex(b, sizeof b);
}

std::string prove(const std::string& secret, const std::string& nonce, const std::string& role) {
  const std::string msg = nonce + "|" + role;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), mac, &len);
  return hex(mac, len);
}

bool verify(const std::string& secret, const std::string& nonce, const std::string& role, const std::string& mac) {
  const std::string want = prove(secret, nonce, role);
  return mac.size() == want.size() && CRYPTO_memcmp(mac.data(), want.data(), want.size()) == 0;
}

}  // namespace kevolve::cluster
