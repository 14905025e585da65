// The viewer's page of each case of a motion study (liembs/study/case_views.hpp).
#include <liembs/config/config_table.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/study/case_views.hpp>
#include <liembs/util/warning.hpp>
#include <liembs/view/run_view.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace liembs::study {

namespace {

// The columns of trajectory.csv that a record holds, by the same names: per body the 13 of
// CaseRecord::motion, then the signed relative energy drift, the relative angular momentum
// drift and per constraint block the position and velocity violations.
ViewTable case_table(const Definition& definition, const Case& item, const CaseRecord& record) {
  static const char* motion_columns[motion_per_body] = {"x",  "y",  "z",  "qw", "qx", "qy", "qz",
                                                        "wx", "wy", "wz", "vx", "vy", "vz"};
  ViewTable table;
  table.title = definition.title + ": " + item.id;
  table.source = "the record of case '" + item.id + "'";
  table.notes = {{"group", record.group}, {"algorithm", record.algorithm}, {"integrator", record.integrator}};
  if (!record.representation.empty()) table.notes.emplace_back("representation", record.representation);
  std::ostringstream step;
  step << record.step_size;
  table.notes.emplace_back("step", step.str());
  table.names.push_back("time");
  table.columns.push_back(record.times);
  for (std::size_t b = 0; b < record.bodies.size(); ++b)
    for (std::size_t k = 0; k < motion_per_body; ++k) {
      table.names.push_back(record.bodies[b] + "." + motion_columns[k]);
      auto& column = table.columns.emplace_back();
      for (const auto& sample : record.motion) column.push_back(sample[b * motion_per_body + k]);
    }
  table.names.push_back("energy_drift_relative");
  table.columns.push_back(record.energy_drift);
  table.names.push_back("angular_momentum_drift_relative");
  table.columns.push_back(record.angular_momentum_drift);
  for (std::size_t j = 0; j < 2 * record.joints.size(); ++j) {
    table.names.push_back((j < record.joints.size() ? "violation." : "velocity_violation.") +
                          record.joints[j % record.joints.size()]);
    auto& column = table.columns.emplace_back();
    for (const auto& sample : record.violations) column.push_back(j < sample.size() ? sample[j] : std::nan(""));
  }
  return table;
}

}  // namespace

std::string case_view_file(const StudyResults& results, std::size_t case_index) {
  const CaseRecord& record = results.records[case_index];
  if (results.definition.kind == StudyKind::algorithms || !record.ok || record.times.empty() || record.hash.empty())
    return "";
  return "views/" + record.hash + ".html";
}

std::size_t write_case_views(const StudyResults& results, const std::filesystem::path& output) {
  // The warnings of the pages (a model's mesh warnings come again on the page of each of its
  // cases) are given once each, in order, after the pages (also when one fails), with on how
  // many pages each came.
  std::vector<std::pair<std::string, std::size_t>> page_warnings;
  const auto count_page = [&](const std::vector<std::string>& messages) {
    for (auto message = messages.begin(); message != messages.end(); ++message) {
      if (std::find(messages.begin(), message, *message) != message) continue;  // twice on this page
      const auto same = std::find_if(page_warnings.begin(), page_warnings.end(),
                                     [&](const auto& seen) { return seen.first == *message; });
      if (same == page_warnings.end()) page_warnings.emplace_back(*message, 1);
      else ++same->second;
    }
  };
  std::size_t pages = 0, written = 0;
  const auto give_warnings = [&] {
    for (const auto& [message, count] : page_warnings)
      warn(message + " (on " + std::to_string(count) + " of the " + std::to_string(pages) + " pages of --views)");
  };
  try {
    for (std::size_t i = 0; i < results.cases.size(); ++i) {
      const std::string file = case_view_file(results, i);
      if (file.empty()) continue;
      ++pages;
      const Case& item = results.cases[i];
      std::string page;
      {
        const CapturedWarnings captured;  // restores the handler as it goes, also on a throw
        try {
          const auto document = case_document(results.definition, item);
          const ConfigTable model_table = document->root().table("model");
          const liembs::Model model = load_model(model_table);
          ViewOptions options;
          options.column = "energy_drift_relative";
          page = view_page(model, read_model_visuals(model_table),
                           case_table(results.definition, item, results.records[i]), options);
        } catch (...) {
          count_page(captured.messages());
          throw;
        }
        count_page(captured.messages());
      }
      std::filesystem::create_directories((output / file).parent_path());
      AtomicFile target(output / file);
      target.stream() << page;
      target.commit();
      ++written;
    }
  } catch (...) {
    give_warnings();
    throw;
  }
  give_warnings();
  return written;
}

}  // namespace liembs::study
