#pragma once
// The progress line of long commands on stderr (`liembs run`, `liembs eval`): drawn only when
// stderr is a terminal (never into a file or a pipe), from one second after the work started,
// redrawn at most four times a second, and erased when the work ends. Its owner asks due()
// where it could report (cheap: a flag without a terminal, a clock read with one) and calls
// show() only when it says yes, so a run or an evaluation is not slowed by it.
#include <chrono>
#include <cstddef>
#include <string>

namespace liembs {

class ProgressLine {
 public:
  ProgressLine();  // the clock starts here
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();  // erases the line

  bool terminal() const { return terminal_; }
  // Whether to draw now: stderr is a terminal, the work has run a second and the line was
  // last drawn a quarter of a second ago or more.
  bool due();
  // Replaces the line by "  <text>" (after due() said yes).
  void show(const std::string& text);
  // Erases the line, if one is shown.
  void clear();

 private:
  bool terminal_;
  std::size_t shown_ = 0;  // characters on the line
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace liembs
