// A duration for people: "1.234 s" (three decimals), as the evaluation timelines print them.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace kevolve {

inline std::string seconds_text(std::chrono::steady_clock::duration d) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", std::chrono::duration<double>(d).count());
  return b;
}

}  // namespace kevolve
