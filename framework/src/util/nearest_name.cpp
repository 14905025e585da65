#include <liembs/util/nearest_name.hpp>

#include <algorithm>

namespace liembs {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    // Case differences count once: "se3" is a likely typo of "SE3".
    std::string lower_name(name), lower_candidate(candidate);
    std::transform(lower_name.begin(), lower_name.end(), lower_name.begin(), ::tolower);
    std::transform(lower_candidate.begin(), lower_candidate.end(), lower_candidate.begin(), ::tolower);
    const std::size_t distance = std::min(edit_distance(name, candidate),
                                          edit_distance(lower_name, lower_candidate) + 1);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
  std::string result;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) result += separator;
    result += names[i];
  }
  return result.empty() ? "(none)" : result;
}

}  // namespace liembs
