// Integer arithmetic expressions over shape symbols ("4*T*H*2 + 4*H", "F+1"): + - * / and parentheses.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kevolve {

// Evaluates `text` with the given symbol values. On failure returns nullopt and sets `error`
// (unknown symbol, syntax error, division by zero).
std::optional<double> eval_expr(const std::string& text, const std::map<std::string, int64_t>& symbols,
                                std::string& error);

}  // namespace kevolve
