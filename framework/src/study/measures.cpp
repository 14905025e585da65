#include <liembs/error.hpp>
#include <liembs/study/measures.hpp>

#include <Eigen/Geometry>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace liembs::study {

using nlohmann::json;

double CaseRecord::cpu_seconds_spread() const {
  if (repetitions < 2 || !(cpu_seconds > 0) || !std::isfinite(cpu_seconds_slowest)) return not_available;
  return (cpu_seconds_slowest - cpu_seconds) / cpu_seconds;
}

double CaseRecord::ns_per_call() const {
  if (states < 1) return not_available;
  return cpu_seconds * 1e9 / static_cast<double>(states);
}

double CaseRecord::statistic(const std::string& name) const {
  for (const auto& [key, value] : statistics)
    if (key == name) return value;
  return not_available;
}

double CaseRecord::right_hand_side_evaluations() const {
  for (const char* name : {"right_hand_side_evaluations", "residual_evaluations"}) {
    const double value = statistic(name);
    if (!std::isnan(value)) return value;
  }
  return not_available;
}

double CaseRecord::newton_iterations() const { return statistic("newton_iterations"); }

double CaseRecord::failed_steps() const {
  double total = 0.0;
  bool any = false;
  for (const char* name : {"error_test_failures", "nonlinear_convergence_failures", "failed_steps"}) {
    const double value = statistic(name);
    if (!std::isnan(value)) total += value, any = true;
  }
  return any ? total : not_available;
}

namespace {

// NaN is stored as null (JSON has no NaN) and read back as NaN.
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
double number(const json& value) { return value.is_number() ? value.get<double>() : not_available; }

json numbers(const std::vector<double>& values) {
  json array = json::array();
  for (const double x : values) array.push_back(number(x));
  return array;
}
std::vector<double> numbers(const json& array) {
  std::vector<double> values;
  for (const auto& x : array) values.push_back(number(x));
  return values;
}

}  // namespace

std::string to_json(const CaseRecord& r) {
  json statistics = json::object();
  for (const auto& [name, value] : r.statistics) statistics[name] = number(value);
  json motion = json::array(), violations = json::array();
  for (const auto& row : r.motion) motion.push_back(numbers(row));
  for (const auto& row : r.violations) violations.push_back(numbers(row));
  const json out = {
      {"id", r.id}, {"hash", r.hash}, {"ok", r.ok}, {"failure_kind", r.failure_kind}, {"error", r.error},
      {"group", r.group}, {"algorithm", r.algorithm}, {"representation", r.representation},
      {"integrator", r.integrator}, {"integrator_description", r.integrator_description},
      {"integrator_order", r.integrator_order}, {"end_time", number(r.end_time)}, {"step_size", number(r.step_size)},
      {"sample_interval", number(r.sample_interval)}, {"cpu_seconds", number(r.cpu_seconds)},
      {"wall_seconds", number(r.wall_seconds)}, {"cpu_seconds_slowest", number(r.cpu_seconds_slowest)},
      {"timed_runs", r.timed_runs}, {"steps", r.steps},
      {"statistics_order", [&] {
         json names = json::array();
         for (const auto& entry : r.statistics) names.push_back(entry.first);
         return names;
       }()},
      {"statistics", statistics}, {"bodies", r.bodies}, {"joints", r.joints},
      {"energy_drift_max", number(r.energy_drift_max)},
      {"angular_momentum_drift_max", number(r.angular_momentum_drift_max)},
      {"orthogonality_error_max", number(r.orthogonality_error_max)},
      {"constraint_violation_max", numbers(r.constraint_violation_max)},
      {"velocity_violation_max", numbers(r.velocity_violation_max)}, {"times", numbers(r.times)},
      {"motion", motion}, {"energy_drift", numbers(r.energy_drift)},
      {"angular_momentum_drift", numbers(r.angular_momentum_drift)}, {"violations", violations},
      {"inputs", r.inputs}, {"outputs", r.outputs}, {"states", r.states}, {"repetitions", r.repetitions},
      {"compared_with", r.compared_with}, {"max_relative_difference", number(r.max_relative_difference)},
      {"plugins", [&] {
         json list = json::array();
         for (const auto& p : r.plugins)
           list.push_back({{"kind", p.kind}, {"name", p.name}, {"version", p.version}, {"file", p.file},
                           {"abi_fingerprint", p.abi_fingerprint}});
         return list;
       }()}};
  return out.dump();
}

CaseRecord record_from_json(const std::string& text) {
  CaseRecord r;
  try {
    const json in = json::parse(text);
    r.id = in.at("id").get<std::string>();
    r.hash = in.at("hash").get<std::string>();
    r.ok = in.at("ok").get<bool>();
    r.failure_kind = in.at("failure_kind").get<std::string>();
    r.error = in.at("error").get<std::string>();
    r.group = in.at("group").get<std::string>();
    r.algorithm = in.at("algorithm").get<std::string>();
    r.representation = in.at("representation").get<std::string>();
    r.integrator = in.at("integrator").get<std::string>();
    r.integrator_description = in.at("integrator_description").get<std::string>();
    r.integrator_order = in.at("integrator_order").get<int>();
    r.end_time = number(in.at("end_time"));
    r.step_size = number(in.at("step_size"));
    r.sample_interval = number(in.at("sample_interval"));
    r.cpu_seconds = number(in.at("cpu_seconds"));
    r.wall_seconds = number(in.at("wall_seconds"));
    r.cpu_seconds_slowest = number(in.at("cpu_seconds_slowest"));
    r.timed_runs = in.at("timed_runs").get<long long>();
    r.steps = in.at("steps").get<long long>();
    for (const auto& name : in.at("statistics_order"))
      r.statistics.emplace_back(name.get<std::string>(), number(in.at("statistics").at(name.get<std::string>())));
    r.bodies = in.at("bodies").get<std::vector<std::string>>();
    r.joints = in.at("joints").get<std::vector<std::string>>();
    r.energy_drift_max = number(in.at("energy_drift_max"));
    r.angular_momentum_drift_max = number(in.at("angular_momentum_drift_max"));
    r.orthogonality_error_max = number(in.at("orthogonality_error_max"));
    r.constraint_violation_max = numbers(in.at("constraint_violation_max"));
    r.velocity_violation_max = numbers(in.at("velocity_violation_max"));
    r.times = numbers(in.at("times"));
    for (const auto& row : in.at("motion")) r.motion.push_back(numbers(row));
    r.energy_drift = numbers(in.at("energy_drift"));
    r.angular_momentum_drift = numbers(in.at("angular_momentum_drift"));
    for (const auto& row : in.at("violations")) r.violations.push_back(numbers(row));
    r.inputs = in.at("inputs").get<std::size_t>();
    r.outputs = in.at("outputs").get<std::size_t>();
    r.states = in.at("states").get<long long>();
    r.repetitions = in.at("repetitions").get<long long>();
    if (in.contains("plugins"))  // records cached before provenance have none
      for (const auto& p : in.at("plugins"))
        r.plugins.push_back({p.at("kind").get<std::string>(), p.at("name").get<std::string>(),
                             p.at("version").get<std::string>(), p.at("file").get<std::string>(),
                             p.at("abi_fingerprint").get<std::string>()});
    r.compared_with = in.at("compared_with").get<std::string>();
    r.max_relative_difference = number(in.at("max_relative_difference"));
  } catch (const json::exception& error) {
    throw Error(std::string("malformed case record: ") + error.what());
  }
  if (r.motion.size() != r.times.size()) throw Error("malformed case record: motion and times differ in length");
  return r;
}

ErrorMeasures compare_with_reference(const CaseRecord& item, const CaseRecord& reference,
                                     const std::vector<std::size_t>& bodies) {
  ErrorMeasures result;
  if (!item.ok || !reference.ok || item.bodies != reference.bodies) return result;
  const std::size_t body_count = item.bodies.size();
  std::vector<std::size_t> chosen = bodies;
  if (chosen.empty())
    for (std::size_t b = 0; b < body_count; ++b) chosen.push_back(b);
  result.per_body.assign(body_count, {not_available, not_available, not_available, not_available});
  const double tolerance = 1e-6 * std::min(item.sample_interval, reference.sample_interval);
  std::size_t j = 0;
  for (std::size_t i = 0; i < item.times.size(); ++i) {
    const double t = item.times[i];
    while (j < reference.times.size() && reference.times[j] < t - tolerance) ++j;
    if (j == reference.times.size()) break;
    if (std::abs(reference.times[j] - t) > tolerance) continue;
    const auto& a = item.motion[i];
    const auto& b = reference.motion[j];
    double pose_now = 0.0, velocity_now = 0.0;
    for (std::size_t body = 0; body < body_count; ++body) {
      const double* x = a.data() + body * motion_per_body;
      const double* y = b.data() + body * motion_per_body;
      const Eigen::Vector3d r(x[0], x[1], x[2]), r_ref(y[0], y[1], y[2]);
      const Eigen::Matrix3d R = Eigen::Quaterniond(x[3], x[4], x[5], x[6]).normalized().toRotationMatrix();
      const Eigen::Matrix3d R_ref = Eigen::Quaterniond(y[3], y[4], y[5], y[6]).normalized().toRotationMatrix();
      const double pose = std::max((R - R_ref).norm(), (r - r_ref).norm());
      double velocity_squared = 0.0;
      for (std::size_t k = 7; k < motion_per_body; ++k) velocity_squared += (x[k] - y[k]) * (x[k] - y[k]);
      const double velocity = std::sqrt(velocity_squared);
      auto& per_body = result.per_body[body];
      per_body.pose_end = pose;
      per_body.velocity_end = velocity;
      per_body.pose_max = std::isnan(per_body.pose_max) ? pose : std::max(per_body.pose_max, pose);
      per_body.velocity_max = std::isnan(per_body.velocity_max) ? velocity : std::max(per_body.velocity_max, velocity);
      if (std::find(chosen.begin(), chosen.end(), body) != chosen.end()) {
        pose_now = std::max(pose_now, pose);
        velocity_now = std::max(velocity_now, velocity);
      }
    }
    ++result.common_times;
    result.history_times.push_back(t);
    result.pose_history.push_back(pose_now);
    result.pose_end = pose_now;
    result.velocity_end = velocity_now;
    result.pose_max = std::isnan(result.pose_max) ? pose_now : std::max(result.pose_max, pose_now);
    result.velocity_max = std::isnan(result.velocity_max) ? velocity_now : std::max(result.velocity_max, velocity_now);
  }
  // The end values are those at the end time, which both runs sample.
  if (result.common_times > 0 && std::abs(result.history_times.back() - item.end_time) > tolerance) {
    result.pose_end = result.velocity_end = not_available;
    for (auto& per_body : result.per_body) per_body.pose_end = per_body.velocity_end = not_available;
  }
  return result;
}

OrderFit fit_order(const std::vector<double>& x, const std::vector<double>& error, double floor) {
  std::vector<std::pair<double, double>> points;  // log10 x, log10 error
  for (std::size_t i = 0; i < x.size() && i < error.size(); ++i)
    if (x[i] > 0 && std::isfinite(x[i]) && std::isfinite(error[i]) && error[i] > 0 && !(error[i] <= floor))
      points.emplace_back(std::log10(x[i]), std::log10(error[i]));
  std::sort(points.begin(), points.end());
  OrderFit best;
  const std::size_t n = points.size();
  if (n < 2) return best;
  const std::size_t min_points = std::min<std::size_t>(3, n);
  for (std::size_t first = 0; first < n; ++first)
    for (std::size_t last = first + min_points - 1; last < n; ++last) {
      const std::size_t count = last - first + 1;
      double sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (std::size_t i = first; i <= last; ++i) {
        sx += points[i].first, sy += points[i].second;
        sxx += points[i].first * points[i].first, sxy += points[i].first * points[i].second;
      }
      const double denominator = count * sxx - sx * sx;
      if (!(std::abs(denominator) > 1e-12)) continue;
      const double slope = (count * sxy - sx * sy) / denominator;
      const double intercept = (sy - slope * sx) / count;
      double residual = 0.0;
      for (std::size_t i = first; i <= last; ++i)
        residual = std::max(residual, std::abs(points[i].second - intercept - slope * points[i].first));
      if (residual > 0.1) continue;
      // Wider wins; on a tie the finer window (the first found, x ascending) stays.
      if (best.valid && count <= best.points) continue;
      best = {true, slope, intercept, std::pow(10.0, points[first].first), std::pow(10.0, points[last].first), count,
              residual};
    }
  return best;
}

std::optional<double> cost_at_error(const std::vector<double>& errors, const std::vector<double>& costs,
                                    double target) {
  std::vector<std::pair<double, double>> rungs;  // error, cost: coarse to fine
  for (std::size_t i = 0; i < errors.size() && i < costs.size(); ++i)
    if (std::isfinite(errors[i]) && errors[i] > 0 && std::isfinite(costs[i]) && costs[i] > 0)
      rungs.emplace_back(errors[i], costs[i]);
  for (std::size_t k = 0; k + 1 < rungs.size(); ++k) {
    const auto [coarse_error, coarse_cost] = rungs[k];
    const auto [fine_error, fine_cost] = rungs[k + 1];
    if (!(coarse_error >= target && target >= fine_error)) continue;
    if (coarse_error == fine_error) return std::min(coarse_cost, fine_cost);
    const double s = (std::log(target) - std::log(coarse_error)) / (std::log(fine_error) - std::log(coarse_error));
    return std::exp(std::log(coarse_cost) + s * (std::log(fine_cost) - std::log(coarse_cost)));
  }
  if (!rungs.empty() && rungs.back().first == target) return rungs.back().second;
  return std::nullopt;
}

}  // namespace liembs::study
