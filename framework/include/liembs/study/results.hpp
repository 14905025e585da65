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
    // reached: two neighbouring rungs bracket the target (the costs above are set). Else the
    // side the ladder is on after its extensions (extend_ladders): every error better than the
    // target (the cost is at most `bound`, the CPU seconds of the cheapest rung), every error
    // worse (not reached down to the rung `bound`), the target below the reference's own
    // error estimate (no rung can show it), or no rung that ran.
    enum class Status { reached, better_at_every_rung, worse_at_every_rung, below_reference, no_data };
    Status status = Status::no_data;
    double bound = not_available;
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

// The files a study writes into its output folder (besides its cache, cases/).
inline constexpr const char* results_file = "results.csv";
inline constexpr const char* series_file = "series.csv";
inline constexpr const char* json_file = "study.json";
inline constexpr const char* report_file = "report.html";

// Throws ConfigError if one of the files above in `folder` would replace an input or a
// special file (liembs/io/file_guard.hpp): called before any case runs.
void check_outputs(const std::filesystem::path& folder);

// The texts of results_file, series_file and json_file (`liembs study` writes them into
// temporaries and renames them into place together with the report: docs/studies.md). An
// algorithm study's results.csv has columns of its own; series.csv is for simulation studies.
void write_results_csv(const StudyResults& results, std::ostream& out);
void write_series_csv(const StudyResults& results, std::ostream& out);
// `folder`: the output folder, where the cases' views (case_views.hpp) are looked for.
void write_study_json(const StudyResults& results, const std::filesystem::path& folder, std::ostream& out);

// The status as written in series.csv and study.json ("reached", "better_at_every_rung", ...).
const char* to_string(Series::Matched::Status status);
// One line for tables: "1.2e-3 s CPU", "better than the target at every rung, at most 4e-4 s CPU",
// "not reached down to step_size = 1.25e-3", ...
std::string describe(const Series::Matched& matched, const Definition& definition, const Series& series);

// Columns of results.csv whose values depend on the machine's load (timings).
const std::vector<std::string>& timing_columns();

}  // namespace liembs::study
