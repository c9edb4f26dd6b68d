// Who may use the dashboard: whoever shows the token (from the environment variable the config names).
// A request proves it by `Authorization: Bearer TOKEN`, by `?token=TOKEN` once (answered with a session
// cookie, HttpOnly, SameSite=Strict, and a redirect that drops the token from the address), or by that
// cookie. Comparisons take the same time whatever the guess (HMAC of both sides, CRYPTO_memcmp).
#pragma once
#include <string>
#include <string_view>

namespace kevolve::dashboard {

class TokenCheck {
 public:
  explicit TokenCheck(std::string token);
  // Whether `candidate` is the token.
  bool matches(std::string_view candidate) const;
  // The session cookie's value: derived from the token (the token itself never goes into a cookie).
  const std::string& session() const { return session_; }
  bool session_matches(std::string_view candidate) const;

 private:
  std::string key_;  // random per process: what both sides are hashed with before comparing
  std::string token_mac_, session_, session_mac_;
};

// The name of the session cookie.
inline constexpr const char* kCookie = "kevolve_dashboard";

// The value of cookie `name` in a Cookie header ("" when absent).
std::string cookie_value(std::string_view header, std::string_view name);

// The token of an "Authorization: Bearer TOKEN" header ("" when it is not one).
std::string bearer_token(std::string_view header);

}  // namespace kevolve::dashboard
