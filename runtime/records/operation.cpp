#include "runtime/records/operation.hpp"

namespace kevolve {

namespace {

constexpr OperationTraits kOperations[] = {
    {Operation::seed, "seed", 0},     {Operation::mutate, "mutate", 1},   {Operation::crossover, "crossover", 2},
    {Operation::repair, "repair", 1}, {Operation::migrate, "migrate", 1},
};

}  // namespace

const OperationTraits& operation_traits(Operation op) {
  for (auto& t : kOperations)
    if (t.op == op) return t;
  return kOperations[0];
}

std::optional<Operation> parse_operation(std::string_view name) {
  for (auto& t : kOperations)
    if (name == t.name) return t.op;
  return std::nullopt;
}

}  // namespace kevolve
