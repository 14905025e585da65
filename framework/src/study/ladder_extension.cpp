#include <liembs/study/ladder_extension.hpp>
#include <liembs/util/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace liembs::study {

namespace {

// A TOML float text for x that reads back as x.
std::string toml_number(double x) {
  std::string text = shortest_number(x);  // 0.04, not 0.040000000000000001
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// The largest admissible rung of an axis: a step at most half the run, a tolerance at most 0.1.
double largest_rung(const Axis& axis, double end_time) {
  const std::string& key = axis.keys.front();
  if (key.find("step_size") != std::string::npos && std::isfinite(end_time)) return 0.5 * end_time;
  if (key.find("tolerance") != std::string::npos) return 0.1;
  return std::numeric_limits<double>::infinity();
}

// The index of the value of `axis` that is `end` (a value index) scaled by `factor` in every
// numeric key; added to the axis if it is not there yet.
int scaled_value(Axis& axis, std::size_t end, double factor) {
  std::vector<std::string> texts;
  for (const std::string& text : axis.values[end]) {
    char* stop = nullptr;
    const double x = std::strtod(text.c_str(), &stop);
    texts.push_back(stop != text.c_str() && *stop == '\0' ? toml_number(x * factor) : text);
  }
  const double rung = axis.rungs[end] * factor;
  for (std::size_t v = 0; v < axis.rungs.size(); ++v)
    if (std::abs(axis.rungs[v] - rung) <= 1e-12 * rung) return static_cast<int>(v);
  axis.values.push_back(texts);
  axis.rungs.push_back(std::strtod(texts.front().c_str(), nullptr));
  axis.labels.push_back(value_label(texts.front()));
  return static_cast<int>(axis.values.size() - 1);
}

}  // namespace

std::vector<Case> extend_ladders(Definition& definition, const StudyResults& results) {
  using Status = Series::Matched::Status;
  std::vector<Case> added;
  std::set<std::string> ids;
  for (const Series& series : results.series) {
    if (series.rungs.size() < 2) continue;
    Axis& axis = definition.axes[series.axis];
    const double given_max = *std::max_element(axis.rungs.begin(), axis.rungs.begin() + static_cast<long>(axis.given_values));
    const double given_min = *std::min_element(axis.rungs.begin(), axis.rungs.begin() + static_cast<long>(axis.given_values));
    bool coarser = false, finer = false;
    for (const auto& matched : series.matched) {
      coarser = coarser || matched.status == Status::better_at_every_rung;
      finer = finer || matched.status == Status::worse_at_every_rung;
    }
    // series.rungs run coarse to fine; series.cases likewise.
    const auto extend = [&](bool coarse_side) {
      const std::size_t end = coarse_side ? 0 : series.rungs.size() - 1;
      const std::size_t inner = coarse_side ? 1 : series.rungs.size() - 2;
      const CaseRecord& end_record = results.records[series.cases[end]];
      if (!end_record.ok) return;  // a coarser step that failed will not get better
      long long already = 0;
      for (const double rung : series.rungs) already += coarse_side ? rung > given_max : rung < given_min;
      if (already >= definition.measure.ladder_extensions) return;
      double ratio = series.rungs[0] / series.rungs[1];
      if (!coarse_side) ratio = series.rungs[inner] / series.rungs[end];
      if (!(ratio > 1.0 + 1e-9) || !std::isfinite(ratio)) ratio = 2.0;
      const double factor = coarse_side ? ratio : 1.0 / ratio;
      if (coarse_side && series.rungs[end] * factor > largest_rung(axis, end_record.end_time)) return;
      const Case& end_case = results.cases[series.cases[end]];
      std::vector<int> choice = end_case.choice;
      choice[series.axis] = scaled_value(axis, static_cast<std::size_t>(end_case.choice[series.axis]), factor);
      Case item = measured_case(definition, end_case.model, choice);
      if (ids.insert(item.id).second) added.push_back(std::move(item));
    };
    if (coarser) extend(true);
    if (finer) extend(false);
  }
  return added;
}

}  // namespace liembs::study
