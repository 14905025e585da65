#pragma once
// Study files (docs/studies.md): base runs (run files or inline runs), axes swept over any
// key of the run files, exclusions, a reference per model and what to measure.
// load_study() reads the file strictly (unknown keys are errors naming file:line:column);
// expand_cases() gives the cases: the product of the axes, minus the exclusions, plus each
// model's reference and its check run.
#include <liembs/config/config_table.hpp>
#include <liembs/study/cpu_time.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace liembs::study {

// Holds when every term holds: the case's value of `key` (an axis key or "model") is one of
// `values` (TOML text, as value_text gives it).
struct Condition {
  struct Term {
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<Term> terms;
  std::string location;  // study file:line:column
};

struct Axis {
  std::string name;                              // its column in results.csv
  std::vector<std::string> keys;                 // run-file keys set together
  std::vector<std::vector<std::string>> values;  // per value: TOML text per key
  std::vector<std::string> labels;               // per value, for tables and figures
  bool ladder = false;                           // a step-size or tolerance ladder
  std::vector<double> rungs;                     // the ladder's values of its first key
  std::size_t given_values = 0;                  // values the study file lists; later ones were
                                                 // added to bracket a target (extend_ladders)
  std::vector<Condition> only, except;           // where the axis applies
  std::string location;
};

// A run file, or a table of the study file read as a run file, with overrides.
struct RunSource {
  std::filesystem::path file;
  std::string inline_table;             // key path of an inline run in the study file, or empty
  std::vector<std::string> removals;    // keys removed from the file before the overrides
  std::vector<std::string> overrides;   // key.path=value, applied in order
  std::string location;
};

struct Model {
  std::string name;
  RunSource run;
  bool has_reference = false;
  RunSource reference;        // run tight: the errors of the cases are measured against it
  RunSource reference_check;  // the same run looser (default: twice the step): its own error estimate
};

struct Measure {
  double sample_interval = 0.0;     // s; 0: end_time / 100 of each run
  std::vector<std::string> bodies;  // bodies errors are taken over (empty: all)
  bool per_body = true;             // per-body error columns
  std::string order_error = "max";  // error the order is fitted to: "max" over time or at the "end"
  std::vector<double> targets;      // errors at which the cost is interpolated along each ladder
  // Rungs a ladder may gain at each end so that its errors bracket every target
  // (extend_ladders, docs/studies.md "Cost at matched accuracy"); 0: never extend.
  long long ladder_extensions = 4;
  // ([measure] repetitions and min_cpu_seconds: Definition::cpu_time.)
};

// What the cases of a study do: integrate their run (simulation), or time the run's
// algorithm on random states and check that the twist representations agree (algorithms,
// docs/studies.md "Algorithm studies").
enum class StudyKind { simulation, algorithms };

// [timing] of an algorithm study: the random states and the agreement; a run of the case is a
// pass over the states ([timing] repetitions and min_cpu_seconds: Definition::cpu_time).
struct Timing {
  long long states = 100;       // random states, drawn from `seed`; each pass calls the algorithm once per state
  long long warmup = 2;         // untimed passes first
  long long seed = 1;           // the same states for every case of a model
  double tolerance = 1e-9;      // largest relative difference between representations that passes
};

struct Definition {
  std::filesystem::path file;
  std::string title;
  StudyKind kind = StudyKind::simulation;
  Timing timing;                  // algorithm studies only
  // How every case is timed ([measure] of a simulation study, [timing] of an algorithm study).
  CpuTimeSettings cpu_time;
  std::vector<Model> models;
  std::vector<Axis> axes;
  std::vector<Condition> exclusions;
  Measure measure;
};

enum class Role { measured, reference, reference_check };
const char* to_string(Role role);

struct Case {
  std::string id;                      // "<model> key=value ...", "<model> [reference]"
  std::size_t model = 0;
  Role role = Role::measured;
  std::vector<int> choice;             // per axis: index of its value, -1 where it does not apply
  std::vector<std::string> overrides;  // the axes' assignments
};

// The axis that sweeps `representation.name`, or -1: algorithm studies compare its values.
int representation_axis(const Definition& definition);

// Throws ConfigError naming the study file, line, column and key.
Definition load_study(const std::filesystem::path& file);
// The same from a loaded document (with overrides applied, as `liembs study --set`).
Definition load_study(const std::shared_ptr<ConfigDocument>& document);

// Measured cases in product order (the last axis varies fastest), then per model its
// reference and reference check.
std::vector<Case> expand_cases(const Definition& definition);

// The measured case of `model` with the axis values `choice` (-1: the axis does not apply),
// its id and overrides as expand_cases() makes them.
Case measured_case(const Definition& definition, std::size_t model, std::vector<int> choice);

// The run document of a case: its source with the source's and the case's overrides.
std::shared_ptr<ConfigDocument> case_document(const Definition& definition, const Case& item);

// The text of an axis value for tables: a string without quotes, anything else as TOML.
std::string value_label(const std::string& toml_text);

}  // namespace liembs::study
