// Arithmetic expressions over shape symbols ("4*T*H*2 + 4*H", "cdiv(T, 4)"): + - * / and parentheses,
// and the functions cdiv(a, b) (division rounded up), min(a, b), max(a, b).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace kevolve {

// Evaluates `text` with the given symbol values. On failure returns nullopt and sets `error`
// (unknown symbol, syntax error, division by zero).
std::optional<double> eval_expr(const std::string& text, const std::map<std::string, int64_t>& symbols,
                                std::string& error);

// The symbol names `text` uses (function names such as cdiv are not symbols; digits of a number, as in 1e5,
// are not either). Does not check the syntax: eval_expr says what is wrong with an expression.
std::set<std::string> symbols_of(const std::string& text);

// True when `text` is a bare symbol name (a letter or '_', then letters, digits, '_'), not an expression.
bool is_symbol(const std::string& text);

}  // namespace kevolve
