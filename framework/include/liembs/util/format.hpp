#pragma once
// Numbers in messages, reports and logs, formatted the same way across the framework, the
// command line and the plugins.
#include <charconv>
#include <cstdio>
#include <string>

namespace liembs {

// x with `digits` significant digits, as printf's %.*g: "0.5", "1.23e-05", "inf".
inline std::string format_number(double x, int digits = 6) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

// The shortest text that reads back to x exactly: "0.1", "1e-300".
inline std::string shortest_number(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

}  // namespace liembs
