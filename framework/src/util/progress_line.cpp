#include <liembs/util/progress_line.hpp>

#include <cstdio>
#include <unistd.h>

namespace liembs {

namespace {
constexpr auto first_after = std::chrono::seconds(1);
constexpr auto redraw_after = std::chrono::milliseconds(250);
}  // namespace

ProgressLine::ProgressLine()
    : terminal_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() { clear(); }

bool ProgressLine::due() {
  if (!terminal_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < first_after || now - last_ < redraw_after) return false;
  last_ = now;
  return true;
}

void ProgressLine::show(const std::string& text) {
  const std::size_t length = 2 + text.size();
  // Spaces over what a longer line before left.
  std::fprintf(stderr, "\r  %s%*s", text.c_str(), shown_ > length ? static_cast<int>(shown_ - length) : 0, "");
  std::fflush(stderr);
  shown_ = length;
}

void ProgressLine::clear() {
  if (shown_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(shown_), "");
  std::fflush(stderr);
  shown_ = 0;
}

}  // namespace liembs
