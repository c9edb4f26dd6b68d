#include "tools/console/line_editor.hpp"

#include <termios.h>
#include <unistd.h>

#include <iostream>

namespace kevolve::console {

bool LineEditor::read(const std::string& prompt, std::string& line) {
  if (!isatty(0) || !isatty(1)) {
    if (!std::getline(std::cin, line)) return false;
    return true;
  }
  return read_raw(prompt, line);
}

bool LineEditor::read_raw(const std::string& prompt, std::string& line) {
  termios old{};
  tcgetattr(0, &old);
  termios raw = old;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  tcsetattr(0, TCSANOW, &raw);
  line.clear();
  size_t cur = 0, hist = history_.size();
  auto redraw = [&] {
    std::cout << "\r\033[K" << prompt << line;
    if (cur < line.size()) std::cout << "\033[" << line.size() - cur << "D";
    std::cout << std::flush;
  };
  redraw();
  bool got = true;
  for (;;) {
    char c = 0;
    if (::read(0, &c, 1) != 1 || (c == 4 && line.empty())) {
      got = false;
      break;
    }  // EOF or Ctrl-D
    if (c == '\r' || c == '\n') break;
    if (c == 127 || c == 8) {
      if (cur > 0) {
        line.erase(--cur, 1);
        redraw();
      }
    } else if (c == '\t') {
      if (line.find(' ') == std::string::npos) {
        std::vector<std::string> m;
        for (auto& w : words_)
          if (w.rfind(line, 0) == 0) m.push_back(w);
        if (m.size() == 1) {
          line = m[0] + " ";
          cur = line.size();
        } else if (m.size() > 1) {
          std::cout << "\n";
          for (auto& w : m) std::cout << w << "  ";
          std::cout << "\n";
        }
        redraw();
      }
    } else if (c == 27) {  // escape sequences: arrows, Home, End
      char s[2];
      if (::read(0, s, 2) != 2 || s[0] != '[') continue;
      if (s[1] == 'A' && hist > 0) {
        line = history_[--hist];
        cur = line.size();
      } else if (s[1] == 'B' && hist < history_.size()) {
        ++hist;
        line = hist < history_.size() ? history_[hist] : "";
        cur = line.size();
      } else if (s[1] == 'C' && cur < line.size())
        ++cur;
      else if (s[1] == 'D' && cur > 0)
        --cur;
      else if (s[1] == 'H')
        cur = 0;
      else if (s[1] == 'F')
        cur = line.size();
      redraw();
    } else if (c >= 32) {
      line.insert(cur++, 1, c);
      redraw();
    }
  }
  tcsetattr(0, TCSANOW, &old);
  std::cout << "\n";
  if (got && !line.empty() && (history_.empty() || history_.back() != line)) history_.push_back(line);
  return got;
}

}  // namespace kevolve::console
