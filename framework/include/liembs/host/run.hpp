#pragma once
// A run assembled from a TOML file: model, chosen plugins, integration settings and
// outputs. load_run() validates the whole file before anything is simulated.
#include <liembs/config/config_table.hpp>
#include <liembs/host/output_schema.hpp>
#include <liembs/model/model.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/state_space.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

namespace liembs {

struct RunSettings {
  double end_time = 1.0;
  double step_size = 1e-3;
  long long output_every = 1;  // write every n-th step to the trajectory
  // [model] allow_initial_projection: a model without joints in absolute coordinates starts
  // from the projection of the file's initial state onto the constraints even when it moves a
  // body by more than initial_projection_tolerance (m, rad, m/s, rad/s); otherwise that is an
  // error (execute_run). docs/constrained-systems.md.
  bool allow_initial_projection = false;
  static constexpr double initial_projection_tolerance = 1e-6;
  // [model] driver_swap_time: where the alternate-driver rule | |f(t)| - 1 | < 0.1 is tested
  // before each step: at its start t_n ("step-start") or at the time it solves for, t_n+1
  // ("step-end", the authors' codes). docs/geometric-constraints.md, "Alternate drivers".
  enum class DriverSwapTime { step_start, step_end };
  DriverSwapTime driver_swap_time = DriverSwapTime::step_start;
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
  std::vector<PluginProvenance> plugins;        // the components above, from the registry
};

// What a file is loaded for: a simulation needs [group], [integrator] and [simulation] and
// binds forward dynamics; an evaluation (`liembs eval`) reads them if present and binds the
// algorithm's batch evaluator.
enum class RunPurpose { simulate, evaluate };

// Reads and validates `document` (its [plugins] paths are added to `registry`, which is
// then loaded), creates every component and rejects unused keys.
// Binds an algorithm for batch evaluation when it declares it (AlgorithmCapabilities::
// batch_evaluation); otherwise throws ModelError saying so (the stated fallback: refused).
std::unique_ptr<BatchEvaluator> bind_batch_evaluator(const Algorithm& algorithm, const DynamicsContext& context);

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
  // The methods chosen where a plugin's optional capability or an option decided (the Newton
  // matrix, the form of an unconstrained formulation, the group's derivatives, the multiplier
  // columns), with their reasons naming the components: summary.json "method_choices" and the
  // console (run_method_choices).
  std::vector<MethodChoice> method_choices;
  State final_state;
  // What summary.json writes besides the measures above.
  std::vector<std::string> columns;  // the trajectory's columns (RunLayout)
  bool normalization = false, charts = false;  // the parameterization has p^T p = 1 / Euler-angle charts
  bool constrained = false;
  std::vector<std::string> redundant_constraints;  // constraint rows left out as redundant
  std::vector<std::pair<std::string, double>> integrator_statistics;
};

// The integrator's method choices (Integrator::method_choices, with {algorithm} and {group}
// replaced by the run's names) and the run's own fallbacks for undeclared capabilities.
std::vector<MethodChoice> run_method_choices(const Run& run, bool constrained);


// summary.json of a run (the keys of host/output_schema.hpp's summary_keys()), as text: the
// file `execute_run` writes and the Python module's summary dict.
std::string summary_json(const Run& run, const RunSummary& summary);

// The complete sample at t = 0 and after every step, handed to the recorders. References
// are valid during the call only.
struct RunSample {
  long long step;                          // 0: the initial state
  double time;
  const State& state;
  const std::vector<Pose>& poses;          // every model body
  const std::vector<Vec6>& twists;         // body-fixed (omega, R^T r')
  const Invariants& invariants;
  double normalization_error;              // 0 without such an invariant
  const std::vector<double>& violations;   // constrained runs: ||g|| per joint, then ||J V|| per joint
  double prescribed_power;                 // tau . q' of the prescribed coordinates (0 without)
  // The trajectory row (RunSummary::columns, in order) at output steps (every output_every
  // steps, the first and the last); empty at the other steps.
  std::span<const double> row;
};

// Receives a run's samples: begin() once with the trajectory's columns, record() at t = 0
// and after every step, end() when the run has succeeded (not after an error).
class RunRecorder {
 public:
  virtual ~RunRecorder() = default;
  virtual void begin(const std::vector<std::string>& columns) { (void)columns; }
  virtual void record(const RunSample& sample) = 0;
  virtual void end(const RunSummary& summary) { (void)summary; }
};

struct RunOutput {
  std::optional<std::filesystem::path> directory;  // nothing written when empty
  bool progress = false;  // progress on stderr for long runs
  std::function<void(const RunSample&)> observer;  // called once per sample when set
  std::vector<RunRecorder*> recorders;              // more recorders (not owned)

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
