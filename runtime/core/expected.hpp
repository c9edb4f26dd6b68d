// Expected<T>: a value or an error message — how fallible steps return without exceptions.
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace kevolve {

template <class T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}
  static Expected failure(std::string error) {
    Expected e;
    e.error_ = std::move(error);
    return e;
  }
  explicit operator bool() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const std::string& error() const { return error_; }

 private:
  Expected() = default;
  std::optional<T> value_;
  std::string error_;
};

}  // namespace kevolve
