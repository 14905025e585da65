#include <liembs/host/output_schema.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <stdexcept>

namespace liembs {

namespace {

// Indices into trajectory_columns(), in its order (make_run_layout expands them in this order).
enum Family : std::size_t {
  time_column,
  body_position,
  body_orientation,
  body_angular_velocity,
  body_velocity,
  base_pose,
  coordinates,
  base_twist,
  rates,
  base_twist_rate,
  accelerations,
  body_acceleration,
  kinetic_energy,
  potential_energy,
  total_energy,
  angular_momentum,
  linear_momentum,
  orthogonality_error,
  normalization_error,
  violation,
  velocity_violation,
  prescribed_force,
  multiplier,
  family_count
};

}  // namespace

const std::vector<ColumnFamily>& trajectory_columns() {
  // The integrators that report V' and lambda (Integrator::accelerations, multipliers).
  static const std::string solvers = "integrators that solve for V' and λ (bdf, kinematics, generalized-alpha, ida)";
  static const std::string base_rate_present = "tree runs with a floating base, " + solvers,
                           acceleration_present = "tree runs, " + solvers,
                           body_acceleration_present = "absolute-coordinate runs, " + solvers,
                           multiplier_present = "constraints, " + solvers;
  static const std::vector<ColumnFamily> families = [] {
    std::vector<ColumnFamily> list(family_count);
    list[time_column] = {"time", "s", "simulated time", "always"};
    list[body_position] = {"<body>.x,y,z", "m", "position of the body frame's origin (world)", "always"};
    list[body_orientation] = {"<body>.qw,qx,qy,qz", "1", "orientation quaternion of the body frame (world; qw ≥ 0)",
                              "always"};
    list[body_angular_velocity] = {"<body>.wx,wy,wz", "rad/s", "angular velocity in the body frame (ω)", "always"};
    list[body_velocity] = {"<body>.vx,vy,vz", "m/s", "velocity of the body frame's origin (world)", "always"};
    list[base_pose] = {"base.x,y,z,qw,qx,qy,qz", "m, 1",
                       "floating base: position and orientation quaternion (world), as `liembs eval` reads them",
                       "tree runs with a floating base"};
    list[coordinates] = {"q.<dof>", "rad or m", "joint coordinates, named and ordered as `liembs eval` names them",
                         "tree runs"};
    list[base_twist] = {"base.wx,wy,wz,vx,vy,vz", "rad/s, m/s", "floating base: body twist (ω, Rᵀṙ)",
                        "tree runs with a floating base"};
    list[rates] = {"qd.<dof>", "rad/s or m/s", "joint rates", "tree runs"};
    list[base_twist_rate] = {"base.dwx,dwy,dwz,dvx,dvy,dvz", "rad/s², m/s²",
                             "floating base: time derivative of the body twist", base_rate_present};
    list[accelerations] = {"qdd.<dof>", "rad/s² or m/s²", "joint accelerations", acceleration_present};
    list[body_acceleration] = {"<body>.dwx,dwy,dwz,dvx,dvy,dvz", "rad/s², m/s²",
                               "time derivative of <body>.wx,wy,wz (ω̇, body frame) and of <body>.vx,vy,vz (r̈, world)",
                               body_acceleration_present};
    list[kinetic_energy] = {energy_columns[0], "J", "kinetic energy T", "always"};
    list[potential_energy] = {energy_columns[1], "J", "potential energy of gravity (zero at the world origin)", "always"};
    list[total_energy] = {energy_columns[2], "J", "E = T + V", "always"};
    list[angular_momentum] = {"angular_momentum_x,y,z", "kg m²/s", "angular momentum about the world origin (world)",
                              "always"};
    list[linear_momentum] = {"linear_momentum_x,y,z", "kg m/s", "linear momentum (world)", "always"};
    list[orthogonality_error] = {"orthogonality_error", "1", "max over the bodies of ‖RᵀR − 1‖", "always"};
    list[normalization_error] = {"normalization_error", "1", "the parameterization's own invariant, |pᵀp − 1|",
                                 "euler-parameters (rp) bodies"};
    list[violation] = {"violation.<constraint>", "m or 1", "‖g‖ of the constraint (position level)",
                       "runs with constraints"};
    list[velocity_violation] = {"velocity_violation.<constraint>", "m/s or 1/s", "‖J V − ν‖ of the constraint",
                                "runs with constraints"};
    list[prescribed_force] = {"tau.<dof>", "N m or N", "the generalized force a prescribed coordinate needs",
                              "prescribed joint motion"};
    list[multiplier] = {"multiplier.<constraint>[.<k>]", "N or N m",
                        "Lagrange multiplier λ per constraint row (.k for blocks of several rows; NaN at t = 0)",
                        multiplier_present};
    return list;
  }();
  return families;
}

const std::vector<SummaryKey>& summary_keys() {
  static const std::vector<SummaryKey> keys{
      {"config", "", "the run file (absolute path)", "always"},
      {"title", "", "the run's title", "always"},
      {"choices", "",
       "group, algorithm, integrator, integrator_description, representation (null without one)", "always"},
      {"step_size", "s", "simulation.step_size", "always"},
      {"end_time", "s", "simulation.end_time", "always"},
      {"steps", "", "steps taken", "always"},
      {"simulated_seconds", "s", "the time reached", "always"},
      {"wall_time_seconds", "s", "wall-clock time of the step loop", "always"},
      {"steps_per_second", "1/s", "steps / wall_time_seconds", "always"},
      {"conservative", "", "no applied loads, prescribed motion or drivers, which do work (energy is conserved)", "always"},
      {"force_free", "", "no external forces (momentum is conserved)", "always"},
      {"energy_initial", "J", "E(0)", "always"},
      {"energy_final", "J", "E at the end", "always"},
      {"energy_drift_max_relative", "1", "max |E(t) − E(0)| / max(|E(0)|, max T(t))", "always"},
      {"angular_momentum_drift_max_relative", "1", "max ‖L(t) − L(0)‖ / max ‖L(t)‖", "always"},
      {"orthogonality_error_max", "1", "max of orthogonality_error", "always"},
      {"normalization_error_max", "1", "max of normalization_error", "euler-parameters (rp) bodies"},
      {"chart_switches", "", "Euler-angle chart switches between steps", "euler-angles bodies"},
      {"prescribed_joints", "", "joints with a prescribed motion", "prescribed joint motion"},
      {"prescribed_coordinates", "", "their coordinates (the tau.<dof> columns)", "prescribed joint motion"},
      {"prescribed_work", "J", "W(t): work of the prescribed forces (trapezoidal rule)", "prescribed joint motion"},
      {"energy_balance_error_max_relative", "1", "max |E(t) − E(0) − W(t)| over the energy scale",
       "prescribed joint motion without applied loads"},
      {"initial_projection_iterations", "", "Newton iterations that made the initial state consistent",
       "runs with constraints"},
      {"driver_swaps", "", "switches between driver constraints", "runs with constraints"},
      {"redundant_constraints", "", "constraint rows left out as redundant", "runs with constraints"},
      {"constraint_violation_max", "", "per constraint: max of violation.<constraint>", "runs with constraints"},
      {"velocity_violation_max", "", "per constraint: max of velocity_violation.<constraint>",
       "runs with constraints"},
      {"integrator_statistics", "", "the integrator's counters (steps, Newton iterations, Newton matrix, ...)",
       "always"},
      {"method_choices", "",
       "topic -> {choice, reason}: which method the run used where a plugin lacks an optional capability "
       "(Newton matrix, DAE or ODE form, ...)",
       "always (empty when there was no choice)"},
      {"provenance", "",
       "liembs_version, git_commit, compiler, build_type, flavour (portable or native), and per plugin of the "
       "run: kind, name, version, file, abi_fingerprint",
       "always"},
  };
  return keys;
}

const SummaryKey& summary_key(std::string_view key) {
  for (const SummaryKey& declared : summary_keys())
    if (declared.key == key) return declared;
  throw std::logic_error("summary key '" + std::string(key) + "' is not declared in output_schema.cpp");
}

void body_motion_values(const Pose& pose, const Vec6& twist, double* out) {
  Eigen::Quaterniond q(pose.R);
  if (q.w() < 0) q.coeffs() *= -1.0;
  const Vec3 velocity = pose.R * twist.tail<3>();
  for (const double v : {pose.r.x(), pose.r.y(), pose.r.z(), q.w(), q.x(), q.y(), q.z(), twist(0), twist(1), twist(2),
                         velocity.x(), velocity.y(), velocity.z()})
    *out++ = v;
}

void body_acceleration_values(const Pose& pose, const Vec6& twist, const Vec6& twist_rate, double* out) {
  const Vec3 acceleration = pose.R * (twist_rate.tail<3>() + twist.head<3>().cross(twist.tail<3>()));
  for (const double v : {twist_rate(0), twist_rate(1), twist_rate(2), acceleration.x(), acceleration.y(), acceleration.z()})
    *out++ = v;
}

RunLayout make_run_layout(RunShape shape) {
  RunLayout layout;
  auto add = [&](Family family, std::string name) {
    layout.columns.push_back(std::move(name));
    layout.family.push_back(family);
  };
  const auto each = [&](Family family, std::string_view prefix, const std::vector<std::string>& items) {
    for (const auto& item : items) add(family, std::string(prefix) + item);
  };
  add(time_column, "time");
  namespace names = column_names;
  for (const auto& body : shape.bodies) {
    const bool kept = !(shape.tree && shape.floating_base && body == shape.base_body &&
                        body + "." == std::string(names::base));
    layout.body_kept.push_back(kept);
    if (!kept) continue;
    for (std::size_t c = 0; c < body_motion_components.size(); ++c)
      add(c < 3 ? body_position : c < 7 ? body_orientation : c < 10 ? body_angular_velocity : body_velocity,
          body + "." + std::string(body_motion_components[c]));
  }
  std::size_t base_index = 0;  // into layout.base_kept
  const auto base = [&](Family family, const auto& components) {
    if (!shape.floating_base) return;
    for (const auto component : components) {
      const std::string name = std::string(names::base) + std::string(component);
      const bool taken = std::find(layout.columns.begin(), layout.columns.end(), name) != layout.columns.end();
      layout.base_kept[base_index++] = !taken;
      if (!taken) add(family, name);
    }
  };
  if (shape.tree) {
    base(base_pose, names::pose_components);
    each(coordinates, names::coordinate, shape.coordinates);
    base(base_twist, names::twist_components);
    each(rates, names::rate, shape.coordinates);
    base_index = 13;
    if (shape.accelerations) {
      base(base_twist_rate, names::twist_rate_components);
      each(accelerations, names::acceleration, shape.coordinates);
    }
  }
  if (shape.body_accelerations)
    for (const auto& body : shape.bodies)
      for (const auto component : body_acceleration_components)
        add(body_acceleration, body + "." + std::string(component));
  add(kinetic_energy, std::string(energy_columns[0]));
  add(potential_energy, std::string(energy_columns[1]));
  add(total_energy, std::string(energy_columns[2]));
  for (const char* axis : {"x", "y", "z"}) add(angular_momentum, std::string("angular_momentum_") + axis);
  for (const char* axis : {"x", "y", "z"}) add(linear_momentum, std::string("linear_momentum_") + axis);
  add(orthogonality_error, "orthogonality_error");
  if (shape.normalization) add(normalization_error, "normalization_error");
  each(violation, "violation.", shape.constraints);
  each(velocity_violation, "velocity_violation.", shape.constraints);
  each(prescribed_force, names::force, shape.prescribed);
  each(multiplier, "multiplier.", shape.multipliers);
  layout.shape = std::move(shape);
  return layout;
}

namespace {

// A Markdown cell: '|' escaped.
std::string cell(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// One row per declaration; the name as code.
std::string markdown_table(const char* first_heading, const std::vector<std::array<std::string_view, 4>>& rows) {
  std::string text = std::string("| ") + first_heading + " | unit | meaning | present |\n|---|---|---|---|\n";
  for (const auto& row : rows) {
    text += "| `";
    text += cell(row[0]);
    text += "` | " + cell(row[1]) + " | " + cell(row[2]) + " | " + cell(row[3]) + " |\n";
  }
  return text;
}

}  // namespace

std::string trajectory_columns_markdown() {
  std::vector<std::array<std::string_view, 4>> rows;
  for (const ColumnFamily& family : trajectory_columns())
    rows.push_back({family.pattern, family.unit, family.description, family.present});
  return markdown_table("column", rows);
}

std::string summary_keys_markdown() {
  std::vector<std::array<std::string_view, 4>> rows;
  for (const SummaryKey& key : summary_keys()) rows.push_back({key.key, key.unit, key.description, key.present});
  return markdown_table("key", rows);
}

}  // namespace liembs
