#include <liembs/util/format.hpp>
#include <liembs/util/range.hpp>

#include <cmath>

namespace liembs {

bool Range::contains(double x) const {
  if (!std::isfinite(x)) return false;
  if (min_exclusive ? !(x > min) : !(x >= min)) return false;
  if (max_exclusive ? !(x < max) : !(x <= max)) return false;
  return true;
}

std::string Range::describe() const {
  const bool has_min = std::isfinite(min), has_max = std::isfinite(max);
  if (!has_min && !has_max) return "a finite number";
  if (has_min && !has_max) return std::string(min_exclusive ? "> " : ">= ") + shortest_number(min);
  if (!has_min) return std::string(max_exclusive ? "< " : "<= ") + shortest_number(max);
  return std::string("in ") + (min_exclusive ? "(" : "[") + shortest_number(min) + ", " +
         shortest_number(max) + (max_exclusive ? ")" : "]");
}

}  // namespace liembs
