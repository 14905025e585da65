#include "run_json.hpp"

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/prescribed_motion.hpp>
#include <liembs/sim/run.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/Geometry>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <unistd.h>

namespace liembs {

namespace {

// Creates the component named by `section.name`; an unknown name is reported at the
// position of the `name` key.
template <class Interface>
std::unique_ptr<Interface> create_from_section(const Registry& registry, const ConfigTable& section,
                                               std::string& name) {
  name = section.string("name");
  try {
    registry.find(Interface::kind, name);
  } catch (const PluginError& error) {
    throw PluginError(section.location("name") + ": " + section.path_of("name") + ": " + error.what());
  }
  return registry.create<Interface>(name, section);
}

}  // namespace

Run load_run(const std::shared_ptr<ConfigDocument>& document, Registry& registry, RunPurpose purpose) {
  ConfigTable root = document->root();
  const bool simulate = purpose == RunPurpose::simulate;
  Run run;
  run.config_file = document->file();
  run.title = root.string_or("title", run.config_file.stem().string());

  if (auto plugins = root.optional_table("plugins")) {
    std::vector<SearchPathEntry> paths;
    const auto base = run.config_file.parent_path();
    for (const auto& item : plugins->strings_or("paths", {})) {
      std::filesystem::path path(item);
      if (path.is_relative()) path = base / path;
      paths.push_back({path, plugins->location("paths") + " [plugins] paths", true});
    }
    registry.prepend_search_path(std::move(paths));
  }
  registry.load();

  run.model = std::make_shared<const Model>(load_model(root.table("model")));
  if (!simulate && run.model->has_prescribed_motion())
    root.table("model").fail("prescribed", "prescribed joint motion is for 'liembs run'; 'liembs eval' takes the "
                                           "motion from its input columns (algorithm 'hybrid-dynamics', "
                                           "docs/higher-order.md)");
  const auto no_options = ConfigDocument::from_string("", "(default options)");

  if (simulate || root.contains("simulation")) {
    const ConfigTable simulation = root.table("simulation");
    run.settings.end_time = simulation.number("end_time", Range::positive());
    run.settings.step_size = simulation.number("step_size", Range::positive());
    if (run.settings.step_size > run.settings.end_time)
      simulation.fail("step_size", "step size " + std::to_string(run.settings.step_size) +
                                       " is larger than end_time " + std::to_string(run.settings.end_time));
    if (run.settings.end_time / run.settings.step_size > 1e10)
      simulation.fail("step_size", "more than 1e10 steps requested");
    run.settings.output_every = simulation.integer_or("output_every", 1, 1);
  }

  if (simulate || root.contains("group")) {
    run.group = create_from_section<Group>(registry, root.table("group"), run.group_name);
  } else {
    run.group_name = "SE3";  // evaluations take base poses and body twists directly
    run.group = registry.create<Group>(run.group_name, no_options->root());
  }
  if (auto section = root.optional_table("algorithm")) {
    run.algorithm = create_from_section<Algorithm>(registry, *section, run.algorithm_name);
  } else {
    run.algorithm_name = run.model->joints.empty() ? "newton-euler" : "aba";
    run.algorithm = registry.create<Algorithm>(run.algorithm_name, no_options->root());
  }
  if (auto section = root.optional_table("representation")) {
    run.representation = create_from_section<Representation>(registry, *section, run.representation_name);
  } else if (!run.model->joints.empty() && run.algorithm->uses_representation()) {
    run.representation_name = "body-fixed";  // the default for trees
    run.representation = registry.create<Representation>(run.representation_name, no_options->root());
  }
  if (simulate || root.contains("integrator"))
    run.integrator = create_from_section<Integrator>(registry, root.table("integrator"), run.integrator_name);

  if (auto output = root.optional_table("output")) {
    if (output->contains("directory")) run.output_directory = output->string("directory");
    run.write_trajectory = output->boolean_or("trajectory", true);
  }

  document->reject_unused_keys();

  const DynamicsContext context{run.model, *run.group, run.group_name, run.representation.get(),
                                run.representation_name};
  const std::string where = run.config_file.string() + ": ";
  try {
    if (simulate) run.dynamics = run.algorithm->bind_forward_dynamics(context);
    else run.evaluator = run.algorithm->bind_evaluator(context);
    if (simulate && run.model->has_prescribed_motion() && !dynamic_cast<PrescribedMotion*>(run.dynamics.get()))
      throw ModelError("it does not support prescribed joint motion ([model.prescribed]); use 'aba' or "
                       "'crba-cholesky' on a tree (or driving constraints in absolute coordinates)");
  } catch (const ModelError& error) {
    throw ModelError(where + "algorithm '" + run.algorithm_name + "'" +
                     (run.representation ? ", representation '" + run.representation_name + "'" : std::string()) +
                     ", group '" + run.group_name + "': " + error.what());
  }
  return run;
}

namespace {

void write_csv_header(std::ostream& out, const Model& model, const ConstrainedSystem* constraints,
                      bool normalization_column, bool with_multipliers, const PrescribedMotion* prescribed) {
  out << "time";
  for (const auto& body : model.bodies) {
    for (const char* column : {"x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "vx", "vy", "vz"})
      out << ',' << body.name << '.' << column;
  }
  out << ",kinetic_energy,potential_energy,total_energy"
         ",angular_momentum_x,angular_momentum_y,angular_momentum_z"
         ",linear_momentum_x,linear_momentum_y,linear_momentum_z,orthogonality_error";
  if (normalization_column) out << ",normalization_error";
  if (constraints) {
    for (const auto& block : constraints->blocks()) out << ",violation." << block.name;
    for (const auto& block : constraints->blocks()) out << ",velocity_violation." << block.name;
  }
  if (prescribed)  // the generalized force each prescribed coordinate needs
    for (const auto& name : prescribed->prescribed_coordinates()) out << ",tau." << name;
  if (with_multipliers) {
    for (const auto& block : constraints->blocks())
      for (Eigen::Index k = 0; k < block.rows; ++k) {
        out << ",multiplier." << block.name;
        if (block.rows > 1) out << '.' << k;
      }
  }
  out << '\n';
}

// The integrator's multipliers lambda (one per constraint row), or NaN where it has none yet
// (the initial row).
void write_csv_multipliers(std::ostream& out, const Eigen::VectorXd* multipliers, Eigen::Index count) {
  const bool known = multipliers && multipliers->size() == count;
  for (Eigen::Index k = 0; k < count; ++k) out << ',' << (known ? (*multipliers)(k) : std::nan(""));
}

void write_csv_row(std::ostream& out, double time, const std::vector<Pose>& poses, const std::vector<Vec6>& twists,
                   const Invariants& invariants, const double* normalization_error,
                   const std::vector<double>& violations) {
  out << time;
  for (std::size_t i = 0; i < poses.size(); ++i) {
    const Pose& pose = poses[i];
    Eigen::Quaterniond q(pose.R);
    if (q.w() < 0) q.coeffs() *= -1.0;
    const Vec3 velocity = pose.R * twists[i].tail<3>();
    const Vec3 omega = twists[i].head<3>();
    out << ',' << pose.r.x() << ',' << pose.r.y() << ',' << pose.r.z() << ',' << q.w() << ',' << q.x() << ','
        << q.y() << ',' << q.z() << ',' << omega.x() << ',' << omega.y() << ',' << omega.z() << ','
        << velocity.x() << ',' << velocity.y() << ',' << velocity.z();
  }
  const auto& L = invariants.angular_momentum;
  const auto& p = invariants.linear_momentum;
  out << ',' << invariants.kinetic_energy << ',' << invariants.potential_energy << ','
      << invariants.total_energy() << ',' << L.x() << ',' << L.y() << ',' << L.z() << ',' << p.x() << ','
      << p.y() << ',' << p.z() << ',' << invariants.orthogonality_error;
  if (normalization_error) out << ',' << *normalization_error;
  for (const double v : violations) out << ',' << v;
}

void write_csv_values(std::ostream& out, const Eigen::VectorXd& values) {
  for (const double v : values) out << ',' << v;
}

// Per-joint ||g|| and ||J V - nu|| at a state, in this order.
std::vector<double> constraint_violations(ConstrainedSystem& constraints, const State& state, DaeTerms& terms) {
  constraints.evaluate(state, terms, dae::position_terms);
  std::vector<double> values = block_norms(constraints.blocks(), terms.residual);
  Eigen::VectorXd rates;
  velocity_violation(terms, state.velocities, rates);
  for (const double v : block_norms(constraints.blocks(), rates)) values.push_back(v);
  return values;
}

// Names the first body whose motion is not finite, for the error message.
std::string first_non_finite(const Model& model, ForwardDynamics& dynamics, const State& state) {
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  dynamics.body_motion(state, poses, twists);
  for (std::size_t i = 0; i < poses.size(); ++i)
    if (!poses[i].R.allFinite() || !poses[i].r.allFinite() || !twists[i].allFinite())
      return "body '" + model.bodies[i].name + "'";
  return "the joint coordinates";
}

}  // namespace

RunSummary execute_run(Run& run, const RunOutput& output) {
  const Model& model = *run.model;
  ForwardDynamics& dynamics = *run.dynamics;
  StateSpace space(*run.group, dynamics.free_bodies(), dynamics.joint_coordinates());
  State state = dynamics.initial_state();
  ConstrainedSystem* constraints = dynamics.constraints();
  RunSummary summary;
  // Joints with a prescribed motion: their coordinates follow q(t) (prescribe), their forces
  // are output columns, and the work they do balances the change of energy.
  PrescribedMotion* const prescribed = model.has_prescribed_motion() ? dynamic_cast<PrescribedMotion*>(&dynamics) : nullptr;
  Eigen::VectorXd prescribed_forces, prescribed_rates;
  double prescribed_power = 0.0;
  auto update_prescribed = [&](const State& x) {
    if (!prescribed) return;
    prescribed->prescribed_forces(x, prescribed_forces, prescribed_rates);
    prescribed_power = prescribed_forces.dot(prescribed_rates);
  };
  if (prescribed) {
    prescribed->prescribe(state);
    summary.prescribed_coordinates = prescribed->prescribed_coordinates();
  }
  DaeTerms constraint_terms;
  std::vector<double> violations;
  if (constraints) {
    // Consistent initial conditions: the configuration onto g = 0, the velocities onto J V = nu
    // keeping the rates the file gives.
    try {
      summary.initial_projection_iterations = make_initial_state_consistent(space, *constraints, state);
    } catch (const SimulationError& error) {
      throw SimulationError(std::string("the initial state cannot be made consistent with the joints: ") + error.what());
    }
    for (const auto& block : constraints->blocks()) summary.constraint_names.push_back(block.name);
    violations = constraint_violations(*constraints, state, constraint_terms);
    const auto count = constraints->blocks().size();
    summary.constraint_violation_max.assign(violations.begin(), violations.begin() + static_cast<long>(count));
    summary.velocity_violation_max.assign(violations.begin() + static_cast<long>(count), violations.end());
  }
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  auto invariants_at = [&](const State& x) {
    dynamics.body_motion(x, poses, twists);
    return compute_invariants(model, poses, twists);
  };

  // Parameterizations with an invariant of their own (rp: p^T p = 1) report its error.
  const bool has_normalization = space.body_coordinates().internal_constraints > 0 && space.free_bodies() > 0;
  std::unique_ptr<AtomicFile> trajectory, summary_file;
  // Integrators that solve for lambda (bdf, kinematics) get one column per constraint row.
  const Eigen::Index multiplier_columns =
      constraints && run.integrator->multipliers() ? constraints->constraint_count() : 0;
  if (output.directory) {
    std::error_code ec;
    std::filesystem::create_directories(*output.directory, ec);
    if (ec) throw Error(output.directory->string() + ": cannot create the output folder: " + ec.message());
    if (run.write_trajectory) {
      trajectory = std::make_unique<AtomicFile>(*output.directory / "trajectory.csv");
      trajectory->stream() << std::setprecision(17);
      write_csv_header(trajectory->stream(), model, constraints, has_normalization, multiplier_columns > 0, prescribed);
    }
    summary_file = std::make_unique<AtomicFile>(*output.directory / "summary.json");
  }

  const Invariants initial = invariants_at(state);
  double normalization_error = space.normalization_error(state);
  summary.normalization_error_max = normalization_error;
  update_prescribed(state);
  if (trajectory) {
    write_csv_row(trajectory->stream(), state.time, poses, twists, initial,
                  has_normalization ? &normalization_error : nullptr, violations);
    write_csv_values(trajectory->stream(), prescribed_forces);
    write_csv_multipliers(trajectory->stream(), nullptr, multiplier_columns);
    trajectory->stream() << '\n';
  }
  if (output.observer) output.observer(RunSample{state.time, poses, twists, initial, violations});
  // Drifts are relative to the largest magnitude the run reaches: for the energy, |E(0)| or the
  // largest kinetic energy; for the angular momentum, its largest norm. A system released from
  // rest may start with E(0) = 0 and L(0) = 0 (relative to those alone, a drift would be 1e300).
  double energy_scale = std::max(std::abs(initial.total_energy()), initial.kinetic_energy);
  double energy_change_max = 0.0, balance_change_max = 0.0;
  double momentum_scale = initial.angular_momentum.norm(), momentum_change_max = 0.0;

  summary.energy_initial = initial.total_energy();
  summary.energy_scale = energy_scale;  // a run of no steps reports the initial state's scales
  summary.angular_momentum_scale = momentum_scale;
  summary.orthogonality_error_max = initial.orthogonality_error;

  const double end_time = run.settings.end_time, step_size = run.settings.step_size;
  const auto steps = static_cast<long long>(std::ceil(end_time / step_size - 1e-9));
  const bool show_progress = output.progress && ::isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  bool progress_shown = false;

  auto interrupted_where = [&] {
    return "at t = " + shortest_number(state.time) + " s (" + std::to_string(summary.steps) + " of " +
           std::to_string(steps) + " steps done)";
  };
  run.integrator->start(space, state);
  for (long long k = 1; k <= steps; ++k) {
    throw_if_interrupted(interrupted_where);
    if (trajectory && (k & 1023) == 0) trajectory->check();
    const double h = (k == steps) ? end_time - state.time : step_size;
    const double time_before = state.time;
    if (constraints) summary.driver_swaps += constraints->switch_drivers(state);
    run.integrator->step(space, dynamics, state, h);
    if (!StateSpace::is_finite(state))
      throw SimulationError("the state of " + first_non_finite(model, dynamics, state) +
                            " is not finite after the step from t = " + shortest_number(time_before) +
                            " s with step size " + shortest_number(h) + " s (integrator '" + run.integrator_name +
                            "'); reduce simulation.step_size");
    // Euler angles near gimbal lock move to another chart between steps (same pose and body
    // twists); integrators with a history restart.
    if (space.update_charts(state)) {
      ++summary.chart_switches;
      run.integrator->charts_switched(space, state);
    }
    ++summary.steps;
    const Invariants now = invariants_at(state);
    energy_scale = std::max(energy_scale, now.kinetic_energy);
    energy_change_max = std::max(energy_change_max, std::abs(now.total_energy() - initial.total_energy()));
    summary.energy_drift_max = relative_change(energy_change_max, energy_scale);
    if (prescribed) {  // W(t) by the trapezoidal rule in the power tau . q'
      const double power_before = prescribed_power;
      update_prescribed(state);
      summary.prescribed_work += 0.5 * (state.time - time_before) * (power_before + prescribed_power);
      balance_change_max = std::max(
          balance_change_max, std::abs(now.total_energy() - initial.total_energy() - summary.prescribed_work));
      summary.energy_balance_error_max = relative_change(balance_change_max, energy_scale);
    }
    momentum_scale = std::max(momentum_scale, now.angular_momentum.norm());
    momentum_change_max = std::max(momentum_change_max, (now.angular_momentum - initial.angular_momentum).norm());
    summary.angular_momentum_drift_max = relative_change(momentum_change_max, momentum_scale);
    summary.energy_scale = energy_scale;
    summary.angular_momentum_scale = momentum_scale;
    summary.orthogonality_error_max = std::max(summary.orthogonality_error_max, now.orthogonality_error);
    normalization_error = space.normalization_error(state);
    summary.normalization_error_max = std::max(summary.normalization_error_max, normalization_error);
    if (constraints) {
      violations = constraint_violations(*constraints, state, constraint_terms);
      const std::size_t count = summary.constraint_names.size();
      for (std::size_t i = 0; i < count; ++i) {
        summary.constraint_violation_max[i] = std::max(summary.constraint_violation_max[i], violations[i]);
        summary.velocity_violation_max[i] = std::max(summary.velocity_violation_max[i], violations[count + i]);
      }
    }
    if (output.observer) output.observer(RunSample{state.time, poses, twists, now, violations});
    if (trajectory && (k % run.settings.output_every == 0 || k == steps)) {
      write_csv_row(trajectory->stream(), state.time, poses, twists, now,
                    has_normalization ? &normalization_error : nullptr, violations);
      write_csv_values(trajectory->stream(), prescribed_forces);
      write_csv_multipliers(trajectory->stream(), run.integrator->multipliers(), multiplier_columns);
      trajectory->stream() << '\n';
    }
    if (k == steps) summary.energy_final = now.total_energy();

    if (show_progress && (k & 63) == 0) {
      const auto clock = std::chrono::steady_clock::now();
      if (clock - start > std::chrono::seconds(1) && clock - last_progress > std::chrono::milliseconds(250)) {
        last_progress = clock;
        progress_shown = true;
        std::fprintf(stderr, "\r  t = %.4g / %.4g s  (%3.0f %%)", state.time, end_time, 100.0 * state.time / end_time);
        std::fflush(stderr);
      }
    }
  }
  if (progress_shown) std::fprintf(stderr, "\r%60s\r", "");
  throw_if_interrupted(interrupted_where);
  summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.simulated_seconds = state.time;
  summary.final_state = state;
  if (prescribed) prescribed->prescribe(summary.final_state);  // integrated alongside, never used: exact

  if (summary_file) {
    // Keys in the order written; non-finite numbers become null.
    nlohmann::ordered_json json;
    // Absolute, so that `liembs view` finds the model from any folder.
    json["config"] = std::filesystem::absolute(run.config_file).lexically_normal().string();
    json["title"] = run.title;
    json["choices"] = run_choices(run);
    json["step_size"] = step_size;
    json["end_time"] = end_time;
    json["steps"] = summary.steps;
    json["wall_time_seconds"] = summary.wall_seconds;
    json["steps_per_second"] = summary.steps / std::max(summary.wall_seconds, 1e-12);
    json["conservative"] = model.is_conservative();
    json["force_free"] = model.is_force_free();
    json["energy_initial"] = summary.energy_initial;
    json["energy_final"] = summary.energy_final;
    json["energy_drift_max_relative"] = summary.energy_drift_max;
    json["angular_momentum_drift_max_relative"] = summary.angular_momentum_drift_max;
    json["orthogonality_error_max"] = summary.orthogonality_error_max;
    if (has_normalization) json["normalization_error_max"] = summary.normalization_error_max;
    if (space.chart_dimension() > 0) json["chart_switches"] = summary.chart_switches;
    if (prescribed) {
      std::vector<std::string> joints;  // each prescribed joint once
      for (const auto& joint : model.joints)
        if (!joint.prescribed.empty()) joints.push_back(joint.name);
      json["prescribed_joints"] = joints;
      json["prescribed_coordinates"] = summary.prescribed_coordinates;
      json["prescribed_work"] = summary.prescribed_work;
      if (model.is_conservative()) json["energy_balance_error_max_relative"] = summary.energy_balance_error_max;
    }
    if (constraints) {
      json["initial_projection_iterations"] = summary.initial_projection_iterations;
      json["driver_swaps"] = summary.driver_swaps;
      json["redundant_constraints"] = constraints->redundant_constraints();
      auto per_joint = [&](const std::vector<double>& values) {
        auto object = nlohmann::ordered_json::object();
        for (std::size_t i = 0; i < values.size(); ++i) object[summary.constraint_names[i]] = values[i];
        return object;
      };
      json["constraint_violation_max"] = per_joint(summary.constraint_violation_max);
      json["velocity_violation_max"] = per_joint(summary.velocity_violation_max);
    }
    auto statistics = nlohmann::ordered_json::object();
    for (const auto& [name, value] : run.integrator->statistics()) statistics[name] = value;
    json["integrator_statistics"] = std::move(statistics);
    summary_file->stream() << json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    if (trajectory) trajectory->commit();
    summary_file->commit();
  }
  return summary;
}

nlohmann::ordered_json run_choices(const Run& run) {
  return {{"group", run.group_name},
          {"algorithm", run.algorithm_name},
          {"integrator", run.integrator_name},
          {"integrator_description", run.integrator->description()},
          {"representation",
           run.representation ? nlohmann::ordered_json(run.representation_name) : nlohmann::ordered_json(nullptr)}};
}

}  // namespace liembs
