#pragma once
// A run assembled from a TOML file: model, chosen plugins, integration settings and
// outputs. load_run() validates the whole file before anything is simulated.
#include <liembs/config/config_table.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/registry.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/state_space.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>

namespace liembs {

struct RunSettings {
  double end_time = 1.0;
  double step_size = 1e-3;
  long long output_every = 1;  // write every n-th step to the trajectory
};

struct Run {
  std::filesystem::path config_file;
  std::string title;
  // Shared with the bound dynamics, which keeps it alive and at a stable address.
  std::shared_ptr<const Model> model;
  RunSettings settings;
  std::string group_name, algorithm_name, integrator_name, representation_name;
  std::unique_ptr<Group> group;
  std::unique_ptr<Algorithm> algorithm;
  std::unique_ptr<Integrator> integrator;
  std::unique_ptr<Representation> representation;  // optional
  std::optional<std::filesystem::path> output_directory;  // from [output] directory
  bool write_trajectory = true;
  std::unique_ptr<ForwardDynamics> dynamics;   // the algorithm bound to model and group (simulate)
  std::unique_ptr<BatchEvaluator> evaluator;   // the algorithm bound for `liembs eval` (evaluate)
};

// What a file is loaded for: a simulation needs [group], [integrator] and [simulation] and
// binds forward dynamics; an evaluation (`liembs eval`) reads them if present and binds the
// algorithm's batch evaluator.
enum class RunPurpose { simulate, evaluate };

// Reads and validates `document` (its [plugins] paths are added to `registry`, which is
// then loaded), creates every component and rejects unused keys.
Run load_run(const std::shared_ptr<ConfigDocument>& document, Registry& registry,
             RunPurpose purpose = RunPurpose::simulate);

// A drift relative to the largest magnitude a run reached (RunSummary): change / scale, and
// 0 when nothing changed (a system at rest throughout has scale 0).
inline double relative_change(double change, double scale) {
  return change == 0.0 ? 0.0 : change / std::max(scale, 1e-300);
}

struct RunSummary {
  long long steps = 0;
  double wall_seconds = 0.0;
  double simulated_seconds = 0.0;
  double energy_initial = 0.0, energy_final = 0.0;
  double energy_drift_max = 0.0;            // max |E(t) - E(0)| / max(|E(0)|, max kinetic energy)
  double angular_momentum_drift_max = 0.0;  // max |L(t) - L(0)| / max |L(t)| (|L(0)| when conserved)
  double energy_scale = 0.0, angular_momentum_scale = 0.0;  // the two drifts' denominators
  double orthogonality_error_max = 0.0;
  double normalization_error_max = 0.0;  // max |p^T p - 1| (parameterizations with such an invariant)
  long long chart_switches = 0;          // Euler-angle chart switches between steps
  // Constrained runs: per joint, max over the run of ||g|| and ||J V - nu|| (002's violations).
  std::vector<std::string> constraint_names;
  std::vector<double> constraint_violation_max, velocity_violation_max;
  int initial_projection_iterations = 0;
  long long driver_swaps = 0;  // ConstrainedSystem::switch_drivers over the run
  // Prescribed joint motion (docs/prescribed-motion.md): the prescribed coordinates, the work
  // their forces did (trapezoidal rule over the steps), and max |E(t) - E(0) - W(t)| relative
  // to the energy scale (the energy balance that replaces energy conservation).
  std::vector<std::string> prescribed_coordinates;
  double prescribed_work = 0.0;
  double energy_balance_error_max = 0.0;
  State final_state;
};

// The motion at t = 0 and after every step, for callers that measure a run as it goes
// (liembs study). References are valid during the call only.
struct RunSample {
  double time;
  const std::vector<Pose>& poses;          // every model body
  const std::vector<Vec6>& twists;         // body-fixed (omega, R^T r')
  const Invariants& invariants;
  const std::vector<double>& violations;   // constrained runs: ||g|| per joint, then ||J V|| per joint
};

struct RunOutput {
  std::optional<std::filesystem::path> directory;  // nothing written when empty
  bool progress = false;  // progress on stderr for long runs
  std::function<void(const RunSample&)> observer;  // called once per step when set

  // The outputs written into `folder`, nothing else.
  static RunOutput into(std::filesystem::path folder) {
    RunOutput output;
    output.directory = std::move(folder);
    return output;
  }
};

// Integrates the run. Outputs (trajectory.csv, summary.json) are written to temporary
// files and renamed into place only when the run succeeds. Throws SimulationError when the
// state stops being finite.
RunSummary execute_run(Run& run, const RunOutput& output);

}  // namespace liembs
