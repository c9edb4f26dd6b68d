// A knowledge-base retrieval query and one hit: what the operator asks the deep-search agent and
// what comes back. Plain records; knowledge/ answers them, the deep-search actor carries them.
#pragma once
#include <cstddef>
#include <string>

namespace kevolve {

struct KbHit {
  std::string path, title;
  double score = 0;
  std::string snippet;  // the first lines of the body
};

struct KbQuery {
  std::string text;
  std::string hardware;  // "" = any
  std::string problem;   // "" = any
  size_t limit = 5;
};

}  // namespace kevolve
