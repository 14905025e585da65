#pragma once
// The admissible interval of a number: what a configuration key (liembs/config/config_table.hpp)
// and a plugin option (liembs/plugin/options.hpp) accept.
#include <limits>
#include <string>

namespace liembs {

// Admissible interval of a number; a bound is open when its *_exclusive flag is set.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;

  static Range any() { return {}; }
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true, false}; }
  static Range non_negative() { return {0.0, std::numeric_limits<double>::infinity(), false, false}; }
  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  bool contains(double x) const;
  std::string describe() const;
};

}  // namespace liembs
