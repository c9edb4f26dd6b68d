// The console's line input: on a terminal, a small line editor with history (up/down), cursor
// movement (left/right, Home/End), backspace and Tab completion of command names; otherwise plain
// std::getline (pipes, scripts).
#pragma once
#include <string>
#include <vector>

namespace kevolve::console {

class LineEditor {
 public:
  explicit LineEditor(std::vector<std::string> words) : words_(std::move(words)) {}
  // Reads one line into `line`; false at end of input.
  bool read(const std::string& prompt, std::string& line);

 private:
  bool read_raw(const std::string& prompt, std::string& line);
  std::vector<std::string> words_, history_;
};

}  // namespace kevolve::console
