#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// Levenshtein distance between two names (case-sensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name`, or "" if none is close enough to be a likely typo.
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);

// "a, b, c" — for error messages listing what is available.
std::string join_names(const std::vector<std::string>& names, std::string_view separator = ", ");

}  // namespace liembs
