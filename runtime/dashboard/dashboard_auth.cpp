#include "runtime/dashboard/dashboard_auth.hpp"

#include <openssl/crypto.h>

#include "runtime/net/peer_proof.hpp"

namespace kevolve::dashboard {
namespace {

bool same(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

TokenCheck::TokenCheck(std::string token)
    : key_(net::make_nonce()),
      token_mac_(net::hmac_hex(key_, token + "|token")),
      session_(net::hmac_hex(token, key_ + "|session")),
      session_mac_(net::hmac_hex(key_, session_ + "|session")) {}

bool TokenCheck::matches(std::string_view candidate) const {
  return same(net::hmac_hex(key_, std::string(candidate) + "|token"), token_mac_);
}

bool TokenCheck::session_matches(std::string_view candidate) const {
  return same(net::hmac_hex(key_, std::string(candidate) + "|session"), session_mac_);
}

std::string cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    std::string_view pair = trim(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && trim(pair.substr(0, eq)) == name) return std::string(trim(pair.substr(eq + 1)));
  }
  return "";
}

std::string bearer_token(std::string_view header) {
  header = trim(header);
  if (header.size() < 7) return "";
  std::string scheme(header.substr(0, 7));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer ") return "";
  return std::string(trim(header.substr(7)));
}

}  // namespace kevolve::dashboard
