// Expected<T>: a value or a Status saying why there is none — how fallible steps return without
// exceptions. error() is the message for people; code() tells the kinds apart (status.hpp).
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "runtime/core/status.hpp"

namespace kevolve {

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}
  // A failure with no more specific kind (Errc::failed).
  static Expected failure(std::string error) { return failure(Errc::failed, std::move(error)); }
  static Expected failure(Errc code, std::string error) {
    return failure(Status::failure(code == Errc::ok ? Errc::failed : code, std::move(error)));
  }
  static Expected failure(Status status) {
    Expected e;
    e.status_ = std::move(status);
    if (e.status_.ok()) e.status_.code = Errc::failed;
    return e;
  }
  explicit operator bool() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const std::string& error() const { return status_.message; }
  Errc code() const { return status_.code; }
  const Status& status() const { return status_; }
  // Drops this result on purpose; `why` says, at the call, why a failure does not matter there.
  void ignore(const char* why) const { (void)why; }

 private:
  Expected() = default;
  std::optional<T> value_;
  Status status_;
};

}  // namespace kevolve
