#pragma once
// Reading the outputs of `liembs study` (the CSV files, the report's figures), for the study tests.
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace study_test {

// The rows of a CSV text with the given columns removed (by header name).
inline std::vector<std::vector<std::string>> csv_without(const std::string& text, const std::vector<std::string>& dropped) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream lines(text);
  std::vector<bool> keep;
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) fields.push_back(field), field.clear();
      else field += c;
    }
    fields.push_back(field);
    if (keep.empty())
      for (const auto& name : fields)
        keep.push_back(std::find(dropped.begin(), dropped.end(), name) == dropped.end());
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (i < keep.size() && keep[i]) kept.push_back(fields[i]);
    rows.push_back(kept);
  }
  return rows;
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Rows of a CSV file as maps from column name to text.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  const auto rows = csv_without(text, {});
  std::vector<std::map<std::string, std::string>> result;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> row;
    for (std::size_t j = 0; j < rows[0].size() && j < rows[i].size(); ++j) row[rows[0][j]] = rows[i][j];
    result.push_back(row);
  }
  return result;
}

// The number of figures report.html announces in its list (data-figures="N"), -1 if none.
inline int announced_figures(const std::string& html) {
  std::smatch match;
  if (!std::regex_search(html, match, std::regex("data-figures=\"([0-9]+)\""))) return -1;
  return std::stoi(match[1]);
}

// Whether report.html holds exactly the figures it announces: figure-1 .. figure-N, each
// with an embedded SVG and one link from the list, and no linked image.
inline bool has_every_announced_figure(const std::string& html) {
  const int announced = announced_figures(html);
  if (announced < 0 || count(html, "<figure ") != announced || html.find("<img") != std::string::npos) return false;
  for (int k = 1; k <= announced; ++k) {
    const auto at = html.find("<figure id=\"figure-" + std::to_string(k) + "\"");
    if (at == std::string::npos || !(html.find("<svg", at) < html.find("</figure>", at))) return false;
    if (count(html, "href=\"#figure-" + std::to_string(k) + "\"") != 1) return false;
  }
  return true;
}

}  // namespace study_test
