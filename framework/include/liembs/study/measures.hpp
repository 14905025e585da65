#pragma once
// What a study measures (docs/studies.md): the record of one case's run (cost, drifts,
// constraint violations, the motion at common sample times), its error against a
// reference, the observed order along a ladder and the cost at matched accuracy.
#include <liembs/host/output_schema.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace liembs::study {

inline constexpr double not_available = std::numeric_limits<double>::quiet_NaN();

// Numbers per body and sample in CaseRecord::motion: the <body>.* columns of trajectory.csv
// (body_motion_components, body_motion_values in host/output_schema.hpp).
inline constexpr std::size_t motion_per_body = body_motion_components.size();

// One case's run, as a child process reports it and the cache keeps it.
struct CaseRecord {
  std::string id, hash;
  bool ok = false;
  std::string failure_kind;  // configuration, plugin, model, simulation, crash, other
  std::string error;         // the message of a failed case
  std::string group, algorithm, representation, integrator, integrator_description;
  int integrator_order = 0;
  double end_time = not_available, step_size = not_available, sample_interval = not_available;
  // CPU time per run, the fastest of `repetitions` timed repetitions (time_repetitions in
  // cpu_time.hpp, settings Definition::cpu_time), each running the case `timed_runs` times or
  // more until the runs have used min_cpu_seconds; `timed_runs` is the fastest repetition's
  // runs, and cpu_seconds_slowest the slowest repetition's time per run, for the spread. A run
  // of a simulation case is one integration, of an algorithm case one pass over its states.
  // The wall time is the measured run's (simulation) or the whole timing's (algorithms).
  double cpu_seconds = not_available, wall_seconds = not_available;
  double cpu_seconds_slowest = not_available;
  long long repetitions = 0;
  long long timed_runs = 0;
  long long steps = 0;
  std::vector<std::pair<std::string, double>> statistics;  // the integrator's counters
  std::vector<std::string> bodies, joints;                 // joints: constraint blocks
  std::vector<PluginProvenance> plugins;                   // the components the case ran with
  double energy_drift_max = not_available, angular_momentum_drift_max = not_available;
  double orthogonality_error_max = not_available;
  std::vector<double> constraint_violation_max, velocity_violation_max;  // per joint
  // At the sample times (multiples of sample_interval, and the end time):
  std::vector<double> times;
  std::vector<std::vector<double>> motion;  // motion_per_body numbers per body
  std::vector<double> energy_drift, angular_momentum_drift;  // relative, signed for energy
  std::vector<std::vector<double>> violations;  // ||g|| per joint, then ||J V|| per joint

  // Algorithm studies: the run's algorithm timed on random states (docs/studies.md).
  std::size_t inputs = 0, outputs = 0;  // numbers in and out per call
  long long states = 0;  // calls per run
  std::string compared_with;  // the representation the outputs were compared with (empty: none)
  double max_relative_difference = not_available;  // max over states of |y - y_ref|_inf / max(1, |y_ref|_inf)

  // A statistic by name, or NaN.
  double statistic(const std::string& name) const;
  // The common cost counters, from the statistics where the integrator reports them.
  double right_hand_side_evaluations() const;  // rkmk: stages x steps; ida: residual evaluations
  double newton_iterations() const;
  double failed_steps() const;  // error-test and convergence failures
  // (slowest - fastest) / fastest of the repetitions' times per run, NaN with fewer than two.
  double cpu_seconds_spread() const;
  // Algorithm cases: CPU nanoseconds per call of the fastest repetition, cpu_seconds / states
  // (NaN for a simulation case or a case not timed).
  double ns_per_call() const;
};

std::string to_json(const CaseRecord& record);
CaseRecord record_from_json(const std::string& text);  // throws Error on a malformed record

// Error of a case against its model's reference at the sample times both have (matched
// within 1e-6 of the sample interval). Pose error of a body: max(|R - R_ref|_F, |r - r_ref|);
// velocity error: |(w, v) - (w_ref, v_ref)|.
struct ErrorMeasures {
  std::size_t common_times = 0;  // 0: no error (no reference, or no common time)
  double pose_end = not_available, pose_max = not_available;
  double velocity_end = not_available, velocity_max = not_available;
  struct PerBody {
    double pose_end, pose_max, velocity_end, velocity_max;
  };
  std::vector<PerBody> per_body;      // in the order of CaseRecord::bodies
  std::vector<double> pose_history;   // max over the bodies at each common time
  std::vector<double> history_times;
};
// `bodies`: indices of the bodies taken into the maxima (all when empty).
ErrorMeasures compare_with_reference(const CaseRecord& item, const CaseRecord& reference,
                                     const std::vector<std::size_t>& bodies);

// Least-squares slope of log(error) over log(x) on the widest run of consecutive points
// (x ascending) that lies on a line (largest residual below 0.1 in log10, i.e. 26 %),
// the finest one on ties. Points with an error at or below `floor` (the reference's own
// error) or not finite are left out. A valid fit needs two points.
struct OrderFit {
  bool valid = false;
  double slope = not_available;
  double intercept = not_available;  // log10(error) = intercept + slope log10(x)
  double x_min = not_available, x_max = not_available;  // the range of validity
  std::size_t points = 0;
  double max_residual = not_available;
};
OrderFit fit_order(const std::vector<double>& x, const std::vector<double>& error, double floor);

// Cost at error `target` along a ladder given coarse to fine: the first (cheapest) pair of
// neighbouring rungs whose errors bracket the target, interpolated linearly in
// log(cost) over log(error); nullopt when no pair brackets it (no extrapolation). Rungs
// whose error or cost is not finite are skipped.
std::optional<double> cost_at_error(const std::vector<double>& errors, const std::vector<double>& costs,
                                    double target);

}  // namespace liembs::study
