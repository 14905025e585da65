#include <liembs/error.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/study/case_views.hpp>
#include <liembs/study/results.hpp>
#include <liembs/util/format.hpp>

#include <liembs/version.hpp>

#include <nlohmann/json.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <thread>

namespace liembs::study {

using nlohmann::json;

double StudyResults::fitted_error(std::size_t case_index) const {
  const ErrorMeasures& error = errors[case_index];
  return definition.measure.order_error == "end" ? error.pose_end : error.pose_max;
}

namespace {

std::vector<std::size_t> body_indices(const Definition& definition, const CaseRecord& record) {
  std::vector<std::size_t> indices;
  for (const auto& name : definition.measure.bodies) {
    const auto found = std::find(record.bodies.begin(), record.bodies.end(), name);
    if (found == record.bodies.end())
      throw ConfigError(definition.file.string() + ": measure.bodies: model of case '" + record.id +
                        "' has no body '" + name + "'");
    indices.push_back(static_cast<std::size_t>(found - record.bodies.begin()));
  }
  return indices;
}

double optional_number(const std::optional<double>& x) { return x ? *x : not_available; }

// The cost of a series at `target` along its work-precision curve, or which side of the
// target the whole ladder lies on (docs/studies.md "Cost at matched accuracy").
Series::Matched match_target(const Series& series, double target, double reference_error) {
  using Status = Series::Matched::Status;
  Series::Matched matched{target,
                          cost_at_error(series.errors, series.cpu_seconds, target),
                          cost_at_error(series.errors, series.steps, target),
                          cost_at_error(series.errors, series.right_hand_side_evaluations, target),
                          cost_at_error(series.errors, series.rungs, target)};
  if (matched.cpu_seconds) {
    matched.status = Status::reached;
    return matched;
  }
  bool any = false, all_better = true, all_worse = true;
  double cheapest = std::numeric_limits<double>::infinity(), finest = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < series.rungs.size(); ++k) {
    if (!std::isfinite(series.errors[k]) || !std::isfinite(series.cpu_seconds[k])) continue;
    any = true;
    all_better = all_better && series.errors[k] < target;
    all_worse = all_worse && series.errors[k] > target;
    cheapest = std::min(cheapest, series.cpu_seconds[k]);
    finest = std::min(finest, series.rungs[k]);
  }
  if (!any) return matched;
  if (all_worse && std::isfinite(reference_error) && target <= reference_error) {
    matched.status = Status::below_reference;
    matched.bound = reference_error;
  } else if (all_better) {
    matched.status = Status::better_at_every_rung;
    matched.bound = cheapest;
  } else if (all_worse) {
    matched.status = Status::worse_at_every_rung;
    matched.bound = finest;
  }
  return matched;
}

}  // namespace

const char* to_string(Series::Matched::Status status) {
  using Status = Series::Matched::Status;
  switch (status) {
    case Status::reached: return "reached";
    case Status::better_at_every_rung: return "better_at_every_rung";
    case Status::worse_at_every_rung: return "worse_at_every_rung";
    case Status::below_reference: return "below_reference";
    case Status::no_data: return "no_data";
  }
  return "no_data";
}

std::string describe(const Series::Matched& matched, const Definition& definition, const Series& series) {
  using Status = Series::Matched::Status;
  const auto short_text = [](double x) { return format_number(x, 3); };
  switch (matched.status) {
    case Status::reached: return short_text(*matched.cpu_seconds) + " s CPU";
    case Status::better_at_every_rung:
      return "better than the target at every rung, at most " + short_text(matched.bound) + " s CPU";
    case Status::worse_at_every_rung:
      return "not reached down to " + definition.axes[series.axis].name + " = " + short_text(matched.bound);
    case Status::below_reference:
      return "below the reference's own error estimate " + short_text(matched.bound);
    case Status::no_data: break;
  }
  return "no rung ran";
}

StudyResults analyse(Definition definition, std::vector<Case> cases, std::vector<CaseRecord> records) {
  StudyResults results;
  results.definition = std::move(definition);
  results.cases = std::move(cases);
  results.records = std::move(records);
  const Definition& d = results.definition;
  const std::size_t models = d.models.size();
  std::vector<const CaseRecord*> reference(models, nullptr), check(models, nullptr);
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    if (results.cases[i].role == Role::reference) reference[results.cases[i].model] = &results.records[i];
    if (results.cases[i].role == Role::reference_check) check[results.cases[i].model] = &results.records[i];
  }
  results.reference_error.assign(models, not_available);
  results.reference_failure.assign(models, "");
  for (std::size_t m = 0; m < models; ++m) {
    if (!d.models[m].has_reference) {
      results.reference_failure[m] = "no reference given";
      continue;
    }
    if (!reference[m]->ok) {
      results.reference_failure[m] = "the reference failed: " + reference[m]->error;
      continue;
    }
    if (!check[m]->ok) {
      results.reference_failure[m] = "the reference check failed: " + check[m]->error;
      continue;
    }
    const ErrorMeasures own = compare_with_reference(*check[m], *reference[m], body_indices(d, *reference[m]));
    results.reference_error[m] = d.measure.order_error == "end" ? own.pose_end : own.pose_max;
  }

  results.errors.resize(results.cases.size());
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const Case& item = results.cases[i];
    const CaseRecord* ref = reference[item.model];
    if (item.role == Role::reference) continue;
    if (ref && results.records[i].ok)
      results.errors[i] = compare_with_reference(results.records[i], *ref, body_indices(d, results.records[i]));
  }

  // Ladders: measured cases of one model equal in every axis but the ladder's.
  for (std::size_t a = 0; a < d.axes.size(); ++a) {
    if (!d.axes[a].ladder) continue;
    std::map<std::pair<std::size_t, std::vector<int>>, std::vector<std::size_t>> groups;
    std::vector<std::pair<std::size_t, std::vector<int>>> order;  // first appearance
    for (std::size_t i = 0; i < results.cases.size(); ++i) {
      const Case& item = results.cases[i];
      if (item.role != Role::measured || item.choice[a] < 0) continue;
      std::vector<int> others = item.choice;
      others[a] = -1;
      auto key = std::make_pair(item.model, others);
      if (!groups.count(key)) order.push_back(key);
      groups[key].push_back(i);
    }
    for (const auto& key : order) {
      std::vector<std::size_t> members = groups[key];
      if (members.size() < 2) continue;
      const Axis& axis = d.axes[a];
      auto rung_of = [&](std::size_t i) { return axis.rungs[static_cast<std::size_t>(results.cases[i].choice[a])]; };
      std::stable_sort(members.begin(), members.end(), [&](std::size_t x, std::size_t y) { return rung_of(x) > rung_of(y); });
      Series series;
      series.model = key.first;
      series.axis = a;
      series.label = d.models[key.first].name;
      for (std::size_t b = 0; b < d.axes.size(); ++b)
        if (b != a && key.second[b] >= 0)
          series.label += " " + d.axes[b].name + "=" + d.axes[b].labels[static_cast<std::size_t>(key.second[b])];
      series.cases = members;
      for (const std::size_t i : members) {
        const CaseRecord& record = results.records[i];
        series.rungs.push_back(rung_of(i));
        series.errors.push_back(results.fitted_error(i));
        series.cpu_seconds.push_back(record.ok ? record.cpu_seconds : not_available);
        series.steps.push_back(record.ok ? static_cast<double>(record.steps) : not_available);
        series.right_hand_side_evaluations.push_back(record.ok ? record.right_hand_side_evaluations() : not_available);
      }
      series.fit = fit_order(series.rungs, series.errors, results.reference_error[key.first]);
      for (const double target : d.measure.targets)
        series.matched.push_back(match_target(series, target, results.reference_error[key.first]));
      results.series.push_back(std::move(series));
    }
  }

  // Algorithm studies: each time per call (the fastest repetition's, as a simulation case's CPU
  // time) over the fastest representation's on the same model, algorithm and other axis values.
  results.ratio_to_best.assign(results.cases.size(), not_available);
  const int representations = representation_axis(d);
  std::map<std::pair<std::size_t, std::vector<int>>, double> best;
  auto group_of = [&](const Case& item) {
    std::vector<int> others = item.choice;
    if (representations >= 0) others[static_cast<std::size_t>(representations)] = -1;
    return std::make_pair(item.model, others);
  };
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const double time = results.records[i].ns_per_call();
    if (!results.records[i].ok || !std::isfinite(time)) continue;
    const auto [entry, inserted] = best.emplace(group_of(results.cases[i]), time);
    if (!inserted) entry->second = std::min(entry->second, time);
  }
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const auto found = best.find(group_of(results.cases[i]));
    if (found != best.end() && std::isfinite(results.records[i].ns_per_call()))
      results.ratio_to_best[i] = results.records[i].ns_per_call() / found->second;
  }
  return results;
}

const std::vector<std::string>& timing_columns() {
  static const std::vector<std::string> columns{"cpu_seconds", "wall_seconds", "cpu_seconds_spread", "timed_runs",
                                                "ns_per_call", "ratio_to_best"};
  return columns;
}

namespace {

std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

// Names in first-appearance order over the records.
template <class Get>
std::vector<std::string> union_of(const std::vector<CaseRecord>& records, Get get) {
  std::vector<std::string> names;
  for (const auto& record : records)
    for (const auto& name : get(record))
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

// The ladder fit a case belongs to (the first ladder axis that applies to it).
const Series* series_of(const StudyResults& results, std::size_t case_index) {
  for (const auto& series : results.series)
    if (std::find(series.cases.begin(), series.cases.end(), case_index) != series.cases.end()) return &series;
  return nullptr;
}

double value_for(const std::vector<std::string>& names, const std::vector<double>& values, const std::string& name) {
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
    if (names[i] == name) return values[i];
  return not_available;
}

}  // namespace

namespace {

// results.csv of an algorithm study: one row per (model, axis values) with the timing and
// the agreement with the first representation.
void write_algorithm_results_csv(const StudyResults& results, std::ostream& out) {
  const Definition& d = results.definition;
  out << "case,model";
  for (const auto& axis : d.axes) out << ',' << csv_text(axis.name);
  out << ",status,failure_kind,algorithm,representation,bodies,inputs,outputs,states,repetitions,timed_runs"
         ",ns_per_call,cpu_seconds_spread,ratio_to_best,compared_with,max_relative_difference,cpu_seconds"
         ",wall_seconds,error_message\n";
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const Case& item = results.cases[i];
    const CaseRecord& r = results.records[i];
    const bool timed = std::isfinite(r.ns_per_call());
    out << csv_text(item.id) << ',' << csv_text(d.models[item.model].name);
    for (std::size_t a = 0; a < d.axes.size(); ++a)
      out << ',' << (item.choice[a] >= 0 ? csv_text(d.axes[a].labels[static_cast<std::size_t>(item.choice[a])]) : "");
    out << ',' << (r.ok ? "ok" : "failed") << ',' << r.failure_kind << ',' << csv_text(r.algorithm) << ','
        << csv_text(r.representation) << ',' << (timed ? std::to_string(r.bodies.size()) : "") << ','
        << (timed ? std::to_string(r.inputs) : "") << ',' << (timed ? std::to_string(r.outputs) : "") << ','
        << (timed ? std::to_string(r.states) : "") << ',' << (timed ? std::to_string(r.repetitions) : "") << ','
        << (timed ? std::to_string(r.timed_runs) : "") << ',' << csv_number(r.ns_per_call()) << ','
        << csv_number(r.cpu_seconds_spread()) << ',' << csv_number(results.ratio_to_best[i]) << ',' << csv_text(r.compared_with) << ','
        << csv_number(r.max_relative_difference) << ',' << csv_number(r.cpu_seconds) << ','
        << csv_number(r.wall_seconds) << ',' << csv_text(r.error) << '\n';
  }
}

}  // namespace

void check_outputs(const std::filesystem::path& folder) {
  for (const char* name : {results_file, series_file, json_file, report_file}) check_output(folder / name);
}

void write_results_csv(const StudyResults& results, std::ostream& out) {
  if (results.definition.kind == StudyKind::algorithms) return write_algorithm_results_csv(results, out);
  const Definition& d = results.definition;
  const auto bodies = union_of(results.records, [](const CaseRecord& r) { return r.bodies; });
  const auto joints = union_of(results.records, [](const CaseRecord& r) { return r.joints; });
  const auto statistics = union_of(results.records, [](const CaseRecord& r) {
    std::vector<std::string> names;
    for (const auto& entry : r.statistics) names.push_back(entry.first);
    return names;
  });
  out << "case,model,role";
  for (const auto& axis : d.axes) out << ',' << csv_text(axis.name);
  out << ",status,failure_kind,group,algorithm,representation,integrator,integrator_order,end_time,step_size"
         ",steps,rhs_evaluations,newton_iterations,failed_steps,cpu_seconds,wall_seconds,repetitions,timed_runs"
         ",cpu_seconds_spread"
         ",pose_error_end,pose_error_max,velocity_error_end,velocity_error_max,reference_error_estimate"
         ",below_reference,observed_order,order_range_min,order_range_max"
         ",energy_drift_max,angular_momentum_drift_max,orthogonality_error_max"
         ",constraint_violation_max,velocity_violation_max";
  if (d.measure.per_body)
    for (const auto& body : bodies)
      for (const char* measure : {"pose_error_end", "pose_error_max", "velocity_error_end", "velocity_error_max"})
        out << ',' << csv_text(std::string(measure) + "." + body);
  for (const auto& joint : joints) out << ',' << csv_text("constraint_violation_max." + joint);
  for (const auto& joint : joints) out << ',' << csv_text("velocity_violation_max." + joint);
  for (const auto& name : statistics) out << ',' << csv_text("stat." + name);
  out << ",error_message\n";

  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const Case& item = results.cases[i];
    const CaseRecord& r = results.records[i];
    const ErrorMeasures& e = results.errors[i];
    out << csv_text(item.id) << ',' << csv_text(d.models[item.model].name) << ',' << to_string(item.role);
    for (std::size_t a = 0; a < d.axes.size(); ++a)
      out << ',' << (item.choice[a] >= 0 ? csv_text(d.axes[a].labels[static_cast<std::size_t>(item.choice[a])]) : "");
    const double reference_error = results.reference_error[item.model];
    const double fitted = item.role == Role::reference ? not_available : results.fitted_error(i);
    const Series* series = item.role == Role::measured ? series_of(results, i) : nullptr;
    auto max_of = [](const std::vector<double>& values) {
      double m = not_available;
      for (const double v : values) m = std::isnan(m) ? v : std::max(m, v);
      return m;
    };
    out << ',' << (r.ok ? "ok" : "failed") << ',' << r.failure_kind << ',' << csv_text(r.group) << ','
        << csv_text(r.algorithm) << ',' << csv_text(r.representation) << ',' << csv_text(r.integrator) << ','
        << (r.ok ? std::to_string(r.integrator_order) : "") << ',' << csv_number(r.end_time) << ','
        << csv_number(r.step_size) << ',' << (r.ok ? std::to_string(r.steps) : "") << ','
        << csv_number(r.right_hand_side_evaluations()) << ',' << csv_number(r.newton_iterations()) << ','
        << csv_number(r.failed_steps()) << ',' << csv_number(r.cpu_seconds) << ',' << csv_number(r.wall_seconds)
        << ',' << (r.ok ? std::to_string(r.repetitions) : "") << ',' << (r.ok ? std::to_string(r.timed_runs) : "")
        << ',' << csv_number(r.cpu_seconds_spread())
        << ',' << csv_number(e.pose_end) << ',' << csv_number(e.pose_max) << ',' << csv_number(e.velocity_end)
        << ',' << csv_number(e.velocity_max) << ',' << csv_number(reference_error) << ','
        << (std::isfinite(fitted) && std::isfinite(reference_error) ? (fitted <= reference_error ? "true" : "false")
                                                                     : "")
        << ',' << (series && series->fit.valid ? csv_number(series->fit.slope) : "") << ','
        << (series && series->fit.valid ? csv_number(series->fit.x_min) : "") << ','
        << (series && series->fit.valid ? csv_number(series->fit.x_max) : "") << ','
        << csv_number(r.energy_drift_max) << ',' << csv_number(r.angular_momentum_drift_max) << ','
        << csv_number(r.orthogonality_error_max) << ',' << csv_number(max_of(r.constraint_violation_max)) << ','
        << csv_number(max_of(r.velocity_violation_max));
    if (d.measure.per_body)
      for (const auto& body : bodies) {
        const auto found = std::find(r.bodies.begin(), r.bodies.end(), body);
        const std::size_t b = static_cast<std::size_t>(found - r.bodies.begin());
        if (found == r.bodies.end() || b >= e.per_body.size()) {
          out << ",,,,";
          continue;
        }
        const auto& p = e.per_body[b];
        out << ',' << csv_number(p.pose_end) << ',' << csv_number(p.pose_max) << ',' << csv_number(p.velocity_end)
            << ',' << csv_number(p.velocity_max);
      }
    for (const auto& joint : joints) out << ',' << csv_number(value_for(r.joints, r.constraint_violation_max, joint));
    for (const auto& joint : joints) out << ',' << csv_number(value_for(r.joints, r.velocity_violation_max, joint));
    for (const auto& name : statistics) out << ',' << csv_number(r.statistic(name));
    out << ',' << csv_text(r.error) << '\n';
  }
}

void write_series_csv(const StudyResults& results, std::ostream& out) {
  const Definition& d = results.definition;
  out << "series,model,ladder,rungs,observed_order,order_range_min,order_range_max,order_points,reference_error_estimate";
  for (const double target : d.measure.targets) {
    std::string suffix = "@";  // (not "@" + ...: a false -Wrestrict of GCC 12)
    suffix += csv_number(target);
    out << ",cpu_seconds" << suffix << ",steps" << suffix << ",rhs_evaluations" << suffix << ",rung" << suffix
        << ",status" << suffix << ",bound" << suffix;
  }
  out << '\n';
  for (const auto& series : results.series) {
    out << csv_text(series.label) << ',' << csv_text(d.models[series.model].name) << ','
        << csv_text(d.axes[series.axis].name) << ',' << series.rungs.size() << ','
        << (series.fit.valid ? csv_number(series.fit.slope) : "") << ','
        << (series.fit.valid ? csv_number(series.fit.x_min) : "") << ','
        << (series.fit.valid ? csv_number(series.fit.x_max) : "") << ',' << series.fit.points << ','
        << csv_number(results.reference_error[series.model]);
    for (const auto& matched : series.matched)
      out << ',' << csv_number(optional_number(matched.cpu_seconds)) << ',' << csv_number(optional_number(matched.steps))
          << ',' << csv_number(optional_number(matched.right_hand_side_evaluations)) << ','
          << csv_number(optional_number(matched.rung)) << ',' << to_string(matched.status) << ','
          << csv_number(matched.bound);
    out << '\n';
  }
}

namespace {

json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
json number(const std::optional<double>& x) { return x ? number(*x) : json(nullptr); }
json numbers(const std::vector<double>& values) {
  json array = json::array();
  for (const double x : values) array.push_back(number(x));
  return array;
}

json machine() {
  json m;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0) m["host"] = host;
  utsname system{};
  if (::uname(&system) == 0) m["system"] = std::string(system.sysname) + " " + system.release + " " + system.machine;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  m["cores"] = std::thread::hardware_concurrency();
  // Over the last 1, 5 and 15 minutes, when the results are written: whether the timings were
  // taken on a quiet machine (a load near the cores means other work shared them).
  double load[3];
  if (::getloadavg(load, 3) == 3) m["load_average"] = {load[0], load[1], load[2]};
  return m;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

}  // namespace

void write_study_json(const StudyResults& results, const std::filesystem::path& folder, std::ostream& stream) {
  const Definition& d = results.definition;
  json out;
  out["title"] = d.title;
  out["study_file"] = d.file.string();
  out["kind"] = d.kind == StudyKind::algorithms ? "algorithms" : "simulation";
  const bool algorithms = d.kind == StudyKind::algorithms;
  if (algorithms)
    out["timing"] = {{"states", d.timing.states},
                     {"repetitions", d.cpu_time.repetitions},
                     {"min_cpu_seconds", d.cpu_time.min_cpu_seconds},
                     {"warmup", d.timing.warmup},
                     {"seed", d.timing.seed},
                     {"tolerance", d.timing.tolerance}};
  out["liembs_version"] = LIEMBS_VERSION;
  {  // as summary.json's: this build, and each plugin file any case ran with (once)
    std::vector<PluginProvenance> plugins;
    for (const CaseRecord& record : results.records)
      for (const PluginProvenance& plugin : record.plugins)
        if (std::none_of(plugins.begin(), plugins.end(), [&](const PluginProvenance& known) {
              return known.kind == plugin.kind && known.name == plugin.name && known.file == plugin.file;
            }))
          plugins.push_back(plugin);
    out["provenance"] = json::parse(provenance_json_text(plugins));
  }
  out["created"] = utc_now();
  out["machine"] = machine();
  out["measure"] = {{"sample_interval", number(d.measure.sample_interval)},
                    {"bodies", d.measure.bodies},
                    {"order_error", d.measure.order_error},
                    {"targets", d.measure.targets}};
  if (!algorithms) {  // the table that declares them (an algorithm study's [timing])
    out["measure"]["repetitions"] = d.cpu_time.repetitions;
    out["measure"]["min_cpu_seconds"] = d.cpu_time.min_cpu_seconds;
  }
  json axes = json::array();
  for (const auto& axis : d.axes)
    axes.push_back({{"name", axis.name}, {"keys", axis.keys}, {"labels", axis.labels}, {"ladder", axis.ladder}});
  out["axes"] = axes;
  json models = json::array();
  for (std::size_t m = 0; m < d.models.size(); ++m)
    models.push_back({{"name", d.models[m].name},
                      {"run_file", d.models[m].run.file.string()},
                      {"reference_error_estimate", number(results.reference_error[m])},
                      {"reference_problem", results.reference_failure[m]}});
  out["models"] = models;
  json cases = json::array();
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const Case& item = results.cases[i];
    const CaseRecord& r = results.records[i];
    const ErrorMeasures& e = results.errors[i];
    json values = json::object();
    for (std::size_t a = 0; a < d.axes.size(); ++a)
      if (item.choice[a] >= 0) values[d.axes[a].name] = d.axes[a].labels[static_cast<std::size_t>(item.choice[a])];
    json statistics = json::object();
    for (const auto& [name, value] : r.statistics) statistics[name] = number(value);
    json violation_history = json::object();
    for (std::size_t j = 0; j < r.joints.size(); ++j) {
      std::vector<double> position, velocity;
      for (const auto& row : r.violations) {
        position.push_back(j < row.size() ? row[j] : not_available);
        velocity.push_back(j + r.joints.size() < row.size() ? row[j + r.joints.size()] : not_available);
      }
      violation_history[r.joints[j]] = {{"position", numbers(position)}, {"velocity", numbers(velocity)}};
    }
    json constraint_max = json::object(), velocity_max = json::object();
    for (std::size_t j = 0; j < r.joints.size(); ++j) {
      constraint_max[r.joints[j]] = number(r.constraint_violation_max[j]);
      velocity_max[r.joints[j]] = number(r.velocity_violation_max[j]);
    }
    const std::string view = case_view_file(results, i);
    const bool has_view = !view.empty() && std::filesystem::exists(folder / view);
    cases.push_back({{"id", item.id},
                     {"model", d.models[item.model].name},
                     {"view", has_view ? json(view) : json(nullptr)},
                     {"role", to_string(item.role)},
                     {"values", values},
                     {"ok", r.ok},
                     {"failure_kind", r.failure_kind},
                     {"error_message", r.error},
                     {"group", r.group},
                     {"algorithm", r.algorithm},
                     {"representation", r.representation},
                     {"integrator", r.integrator},
                     {"integrator_description", r.integrator_description},
                     {"integrator_order", r.integrator_order},
                     {"end_time", number(r.end_time)},
                     {"step_size", number(r.step_size)},
                     {"steps", r.steps},
                     {"cpu_seconds", number(r.cpu_seconds)},
                     {"wall_seconds", number(r.wall_seconds)},
                     {"repetitions", r.repetitions},
                     {"timed_runs", r.timed_runs},
                     {"cpu_seconds_spread", number(r.cpu_seconds_spread())},
                     {"rhs_evaluations", number(r.right_hand_side_evaluations())},
                     {"newton_iterations", number(r.newton_iterations())},
                     {"failed_steps", number(r.failed_steps())},
                     {"statistics", statistics},
                     {"pose_error_end", number(e.pose_end)},
                     {"pose_error_max", number(e.pose_max)},
                     {"velocity_error_end", number(e.velocity_end)},
                     {"velocity_error_max", number(e.velocity_max)},
                     {"energy_drift_max", number(r.energy_drift_max)},
                     {"angular_momentum_drift_max", number(r.angular_momentum_drift_max)},
                     {"orthogonality_error_max", number(r.orthogonality_error_max)},
                     {"constraint_violation_max", constraint_max},
                     {"velocity_violation_max", velocity_max},
                     {"bodies", r.bodies.size()},
                     {"inputs", r.inputs},
                     {"outputs", r.outputs},
                     {"ns_per_call", number(r.ns_per_call())},
                     {"ratio_to_best", number(results.ratio_to_best[i])},
                     {"compared_with", r.compared_with},
                     {"max_relative_difference", number(r.max_relative_difference)},
                     {"history",
                      {{"time", numbers(r.times)},
                       {"energy_drift", numbers(r.energy_drift)},
                       {"angular_momentum_drift", numbers(r.angular_momentum_drift)},
                       {"violation", violation_history},
                       {"pose_error_time", numbers(e.history_times)},
                       {"pose_error", numbers(e.pose_history)}}}});
  }
  out["cases"] = cases;
  json series_list = json::array();
  for (const auto& series : results.series) {
    json matched = json::array();
    for (const auto& m : series.matched)
      matched.push_back({{"target", m.target},
                         {"cpu_seconds", number(m.cpu_seconds)},
                         {"steps", number(m.steps)},
                         {"rhs_evaluations", number(m.right_hand_side_evaluations)},
                         {"rung", number(m.rung)},
                         {"status", to_string(m.status)},
                         {"bound", number(m.bound)},
                         {"text", describe(m, d, series)}});
    std::vector<std::string> ids;
    for (const std::size_t i : series.cases) ids.push_back(results.cases[i].id);
    series_list.push_back({{"label", series.label},
                           {"model", d.models[series.model].name},
                           {"ladder", d.axes[series.axis].name},
                           {"cases", ids},
                           {"rungs", numbers(series.rungs)},
                           {"errors", numbers(series.errors)},
                           {"cpu_seconds", numbers(series.cpu_seconds)},
                           {"steps", numbers(series.steps)},
                           {"rhs_evaluations", numbers(series.right_hand_side_evaluations)},
                           {"fit",
                            {{"valid", series.fit.valid},
                             {"order", number(series.fit.slope)},
                             {"intercept", number(series.fit.intercept)},
                             {"range_min", number(series.fit.x_min)},
                             {"range_max", number(series.fit.x_max)},
                             {"points", series.fit.points}}},
                           {"matched", matched}});
  }
  out["series"] = series_list;
  stream << out.dump(1) << '\n';
}

}  // namespace liembs::study
