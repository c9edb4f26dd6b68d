// The one logger of kevolve's libraries: a line per message, written to stderr in one write(2) so lines
// of several threads or processes never interleave, as "kevolve[ COMPONENT]: message". Levels from
// $KEVOLVE_LOG (error, warn, info, debug; default info): a message above the level is not formatted.
// The programs' own answers to their users (tools/kevolve commands) print directly; diagnostics of the
// actors, the store, the backends and the network come through here.
#pragma once
#include <sstream>
#include <string>
#include <string_view>

namespace kevolve::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

// The level $KEVOLVE_LOG names (read once); info when unset or not a level's name.
Level threshold();
inline bool enabled(Level l) { return static_cast<int>(l) <= static_cast<int>(threshold()); }

// Writes "kevolve[ component]: message\n" when `level` is enabled. A message of several lines keeps them.
void write(Level level, std::string_view component, std::string_view message);

// One line built with <<, written when it goes out of scope: Line(Level::warn, "evaluator") << "lost " << n;
class Line {
 public:
  Line(Level level, std::string_view component) : level_(level), component_(component), on_(enabled(level)) {}
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  ~Line() {
    if (on_) write(level_, component_, text_.str());
  }
  template <class T>
  Line& operator<<(const T& v) {
    if (on_) text_ << v;
    return *this;
  }

 private:
  Level level_;
  std::string component_;
  bool on_;
  std::ostringstream text_;
};

inline Line error(std::string_view component = "") { return Line(Level::error, component); }
inline Line warn(std::string_view component = "") { return Line(Level::warn, component); }
inline Line info(std::string_view component = "") { return Line(Level::info, component); }
inline Line debug(std::string_view component = "") { return Line(Level::debug, component); }

}  // namespace kevolve::log
