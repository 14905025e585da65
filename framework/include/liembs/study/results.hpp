#pragma once
// The results of a study: errors against the references, the ladders with their fitted
// order and cost at matched accuracy, and the files results.csv, series.csv and study.json
// (docs/studies.md documents their columns and keys).
#include <liembs/study/measures.hpp>
#include <liembs/study/study_file.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace liembs::study {

// One ladder: the cases of a model that differ only in the ladder axis, coarse to fine.
struct Series {
  std::size_t model = 0, axis = 0;
  std::string label;                // "<model> <other axes' values>"
  std::vector<std::size_t> cases;   // indices into StudyResults::records
  std::vector<double> rungs, errors, cpu_seconds, steps, right_hand_side_evaluations;
  OrderFit fit;
  struct Matched {
    double target;
    std::optional<double> cpu_seconds, steps, right_hand_side_evaluations, rung;
  };
  std::vector<Matched> matched;  // per measure.targets
};

struct StudyResults {
  Definition definition;
  std::vector<Case> cases;
  std::vector<CaseRecord> records;
  std::vector<ErrorMeasures> errors;            // per case (none for references)
  std::vector<double> reference_error;          // per model: |reference - check|, NaN without one
  std::vector<std::string> reference_failure;   // per model: why its reference has no estimate
  std::vector<Series> series;
  // Algorithm studies, per case: its median time per call over the fastest representation's
  // among the cases of its model that differ only in the representation (NaN if not timed).
  std::vector<double> ratio_to_best;
  // The error of a case fitted along ladders (measure.order_error: max over time or end).
  double fitted_error(std::size_t case_index) const;
};

StudyResults analyse(Definition definition, std::vector<Case> cases, std::vector<CaseRecord> records);

// Written atomically into `folder`. An algorithm study's results.csv has columns of its own
// (docs/studies.md); series.csv is for simulation studies.
void write_results_csv(const StudyResults& results, const std::filesystem::path& folder);
void write_series_csv(const StudyResults& results, const std::filesystem::path& folder);
void write_study_json(const StudyResults& results, const std::filesystem::path& folder);

// Columns of results.csv whose values depend on the machine's load (timings).
const std::vector<std::string>& timing_columns();

}  // namespace liembs::study
