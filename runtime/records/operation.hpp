// Operation: what a proposal asks an operator to make — one enum, one traits table. The names are what
// the store keeps in each node record and what every output prints; they are parsed in one place.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace kevolve {

enum class Operation : uint8_t {
  seed = 0,   // a first kernel, no parent
  mutate,     // a variation of one parent
  crossover,  // a child of two parents
  repair,     // a fix of one failed parent
  migrate,    // a copy of one parent into another island
};

struct OperationTraits {
  Operation op;
  const char* name;  // as stored and printed
  int parents;       // how many parents a proposal of it names
};

const OperationTraits& operation_traits(Operation op);
inline const char* operation_name(Operation op) { return operation_traits(op).name; }
// The operation with this name; none for an unknown one.
std::optional<Operation> parse_operation(std::string_view name);
inline std::ostream& operator<<(std::ostream& o, Operation op) { return o << operation_name(op); }

}  // namespace kevolve
