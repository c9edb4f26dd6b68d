// Bytes from a record's field list (fields.hpp), the same for every record: strings (and operations, by
// name) and containers with a u32 count, enums, bools and 32-bit integers as u32, 64-bit integers as i64, doubles as f64, nested
// records field by field. This is the layout the store has always written for nodes and searches.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/core/wire.hpp"
#include "runtime/records/fields.hpp"

namespace kevolve::field_codec {

template <class T>
concept HasFields = requires(T& x) {
  fields(x, [](auto&...) {});
};

template <class T>
void put(wire::Writer& w, const T& x);
template <class T>
void get(wire::Reader& r, T& x);

template <class T>
void put(wire::Writer& w, const T& x) {
  if constexpr (HasFields<T>) {
    fields(x, [&](const auto&... m) { (put(w, m), ...); });
  } else if constexpr (std::is_same_v<T, Operation>) {  // by name, as the store has always kept it
    w.str(operation_name(x));
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.str(x);
  } else if constexpr (std::is_same_v<T, double>) {
    w.f64(x);
  } else if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool> || (std::is_integral_v<T> && sizeof(T) <= 4)) {
    w.u32(static_cast<uint32_t>(x));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    w.i64(static_cast<int64_t>(x));
  } else if constexpr (requires { x.begin()->first; }) {  // a map
    w.u32(static_cast<uint32_t>(x.size()));
    for (auto& [k, v] : x) {
      put(w, k);
      put(w, v);
    }
  } else {  // a vector
    w.u32(static_cast<uint32_t>(x.size()));
    for (auto& v : x) put(w, v);
  }
}

template <class T>
void get(wire::Reader& r, T& x) {
  if constexpr (HasFields<T>) {
    fields(x, [&](auto&... m) { (get(r, m), ...); });
  } else if constexpr (std::is_same_v<T, Operation>) {
    auto op = parse_operation(r.str());
    if (!op) throw wire::DecodeError("unknown operation");
    x = *op;
  } else if constexpr (std::is_same_v<T, std::string>) {
    x = r.str();
  } else if constexpr (std::is_same_v<T, double>) {
    x = r.f64();
  } else if constexpr (std::is_same_v<T, bool>) {
    x = r.u32() != 0;
  } else if constexpr (std::is_enum_v<T> || (std::is_integral_v<T> && sizeof(T) <= 4)) {
    x = static_cast<T>(r.u32());
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    x = static_cast<T>(r.i64());
  } else if constexpr (requires { x.begin()->first; }) {
    x.clear();
    for (uint32_t n = r.u32(); n > 0; --n) {
      typename T::key_type k;
      get(r, k);
      get(r, x[k]);
    }
  } else {
    x.resize(r.count());
    for (auto& v : x) get(r, v);
  }
}

template <class T>
std::string encode_record(const T& x) {
  wire::Writer w;
  put(w, x);
  return std::string(w.bytes().begin(), w.bytes().end());
}

// Decodes a whole record; the first `required` fields must be there, later ones may be absent (records
// stored before they existed) and keep their defaults. False when the bytes are not such a record.
template <class T>
bool decode_record(const std::string& bytes, T& x, size_t required) {
  x = T{};
  std::vector<char> b(bytes.begin(), bytes.end());
  try {
    wire::Reader r(b);
    size_t i = 0;
    bool ok = true;
    fields(x, [&](auto&... m) { (((ok = ok && (r.done() ? i >= required : (get(r, m), true))), ++i), ...); });
    return ok && r.done();
  } catch (const wire::DecodeError&) { return false; }
}

}  // namespace kevolve::field_codec
