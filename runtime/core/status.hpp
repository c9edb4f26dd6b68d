// Status: the one error type of kevolve — a code saying what kind of failure it is (so callers can tell
// "not there" from "there but unreadable") and a message for people naming the file, field or step.
// Expected<T> (expected.hpp) carries a Status when it holds no value.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace kevolve {

enum class Errc : uint8_t {
  ok = 0,
  failed,            // a failure with no more specific kind
  invalid_argument,  // bad input: a config field, a command-line value, a malformed file
  not_found,         // the thing asked for does not exist
  corrupt,           // it exists but cannot be decoded: never treat as absent
  io,                // reading or writing a file or the store failed
  unavailable,       // a device, peer or service is not there (or not on this machine)
  busy,              // someone else holds it (a store lock, a running search)
  timeout,
};

// "not_found", "corrupt", ... (the code's name, for logs and JSON)
const char* errc_name(Errc c);

// [[nodiscard]]: a Status that is dropped is a build error (-Werror=unused-result). A failure dropped on
// purpose says why at the call: `store.write(b).ignore("the next checkpoint writes it again")`.
struct [[nodiscard]] Status {
  Errc code = Errc::ok;
  std::string message;

  static Status success() { return {}; }
  static Status failure(Errc code, std::string message) { return {code, std::move(message)}; }
  bool ok() const { return code == Errc::ok; }
  explicit operator bool() const { return ok(); }
  // "message" for a generic failure, "corrupt: message" otherwise; "ok" on success.
  std::string text() const;
  // Drops this status on purpose; `why` says, at the call, why a failure does not matter there.
  void ignore(const char* why) const { (void)why; }
};

}  // namespace kevolve
