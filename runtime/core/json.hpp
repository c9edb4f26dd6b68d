// Minimal JSON writing for the CLI's --json output (objects of strings and numbers).
#pragma once
#include <string>

namespace kevolve::json {

std::string quote(const std::string& s);  // a JSON string literal, escaped; bytes not UTF-8 become U+FFFD
std::string number(double v);             // finite numbers as-is, NaN/Inf as null

}  // namespace kevolve::json
