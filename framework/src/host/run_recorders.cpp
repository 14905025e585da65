#include "run_recorders.hpp"

#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/sim/invariants.hpp>

#include <Eigen/Geometry>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>

namespace liembs {

RunSampler::RunSampler(Run& run, const StateSpace& space)
    : run_(run),
      model_(*run.model),
      space_(space),
      dynamics_(*run.dynamics),
      constraints_(dynamics_.constraints()),
      prescribed_(model_.has_prescribed_motion() ? dynamics_.capabilities().prescribed_motion : nullptr) {
  RunShape shape;
  for (const auto& body : model_.bodies) shape.bodies.push_back(body.name);
  // A tree formulation integrates the compiled tree's coordinates (State::coordinates, in node
  // order) and, with a floating base, the base as its one free body.
  if (dynamics_.joint_coordinates() > 0 && !model_.joints.empty()) {
    const KinematicTree tree = compile_tree(model_, true);
    if (static_cast<std::size_t>(tree.dof()) == dynamics_.joint_coordinates() &&
        dynamics_.free_bodies() == (tree.floating_base ? 1u : 0u)) {
      shape.tree = true;
      shape.floating_base = tree.floating_base;
      shape.coordinates = tree.dof_names;
      base_body_ = tree.base_body;
      shape.base_body = model_.bodies[tree.base_body].name;
      shape.accelerations = run.integrator->capabilities().accelerations;
    }
  }
  // Absolute coordinates: every model body is a free body of the state (in model order).
  shape.body_accelerations = !shape.tree && space.joint_coordinates() == 0 &&
                             space.free_bodies() == model_.bodies.size() && !model_.bodies.empty() &&
                             run.integrator->capabilities().accelerations;
  shape.normalization = space.body_coordinates().internal_constraints > 0 && space.free_bodies() > 0;
  if (constraints_) {
    for (const auto& block : constraints_->blocks()) shape.constraints.push_back(block.name);
    if (run.integrator->capabilities().multipliers) {  // one column per constraint row
      for (const auto& block : constraints_->blocks())
        for (Eigen::Index k = 0; k < block.rows; ++k)
          shape.multipliers.push_back(block.rows > 1 ? block.name + "." + std::to_string(k) : block.name);
      multiplier_count_ = constraints_->constraint_count();
    }
  }
  if (prescribed_) shape.prescribed = prescribed_->prescribed_coordinates();
  violations_.resize(2 * shape.constraints.size());
  layout_ = make_run_layout(std::move(shape));
  row_.resize(layout_.columns.size());
  velocity_maps_.resize(6 * static_cast<Eigen::Index>(space.body_velocity_dimension()));
  map_rates_.resize(6 * static_cast<Eigen::Index>(space.free_bodies()));
  twist_rates_.resize(space.free_bodies());
}

// V' from the integrator (at t = 0, before its first step, from the forward dynamics, which
// is also where the integrators start) and the free bodies' body twist rates
// V_b' = T v' + T' v (Group::velocity_maps).
void RunSampler::take_rates(const State& state, long long step) {
  const RunShape& shape = layout_.shape;
  if (!shape.accelerations && !shape.body_accelerations) return;
  const Eigen::VectorXd* solved = run_.integrator->accelerations();
  if (step == 0 || !solved || solved->size() != state.velocities.size()) {
    dynamics_.velocity_rates(state, rates_);
  } else {
    rates_ = *solved;
  }
  const std::size_t bodies = space_.free_bodies();
  if (bodies > 0) {
    const Eigen::Index body_velocities = static_cast<Eigen::Index>(space_.body_velocity_dimension());
    run_.group->velocity_maps(state.poses, state.chart.data(), state.velocities.data(), velocity_maps_.data(),
                              map_rates_.data());
    const Eigen::Index per_body = body_velocities / static_cast<Eigen::Index>(bodies);
    for (std::size_t i = 0; i < bodies; ++i) {
      const auto b = static_cast<Eigen::Index>(i);
      twist_rates_[i] = Eigen::Map<const Eigen::MatrixXd>(velocity_maps_.data() + 6 * per_body * b, 6, per_body) *
                            rates_.segment(per_body * b, per_body) +
                        map_rates_.segment<6>(6 * b);
    }
  }
  rates_step_ = step;
}

RunSample RunSampler::sample(const State& state, long long step, bool row) {
  dynamics_.body_motion(state, poses_, twists_);
  invariants_ = compute_invariants(model_, poses_, twists_);
  const double normalization_error = space_.normalization_error(state);
  if (constraints_) {  // per block ||g||, then ||J V - nu||
    constraints_->evaluate(state, constraint_terms_, dae::position_terms);
    velocity_violation(constraint_terms_, state.velocities, velocity_residual_);
    const auto& blocks = constraints_->blocks();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      violations_[i] = constraint_terms_.residual.segment(blocks[i].first, blocks[i].rows).norm();
      violations_[blocks.size() + i] = velocity_residual_.segment(blocks[i].first, blocks[i].rows).norm();
    }
  }
  double power = 0.0;
  if (prescribed_) {
    prescribed_->prescribed_forces(state, prescribed_forces_, prescribed_rates_);
    power = prescribed_forces_.dot(prescribed_rates_);
  }
  if (row) fill_row(state, step);
  return RunSample{step,
                   state.time,
                   state,
                   poses_,
                   twists_,
                   invariants_,
                   normalization_error,
                   violations_,
                   power,
                   row ? std::span<const double>(row_) : std::span<const double>()};
}

// The values in the order of make_run_layout (host/output_schema.cpp).
void RunSampler::fill_row(const State& state, long long step) {
  const RunShape& shape = layout_.shape;
  double* out = row_.data();
  *out++ = state.time;
  for (std::size_t i = 0; i < poses_.size(); ++i)
    if (layout_.body_kept[i]) {
      body_motion_values(poses_[i], twists_[i], out);
      out += body_motion_components.size();
    }
  if (shape.tree) {
    const Eigen::Index n = state.coordinates.size(), base_velocities = state.velocities.size() - n;
    if (shape.floating_base) {  // the base body's pose and body twist, as `liembs eval` reads them
      const Pose& base = poses_[base_body_];
      Eigen::Quaterniond q(base.R);
      if (q.w() < 0) q.coeffs() *= -1.0;
      int k = 0;
      for (const double v : {base.r.x(), base.r.y(), base.r.z(), q.w(), q.x(), q.y(), q.z()})
        if (layout_.base_kept[k++]) *out++ = v;
    }
    out = std::copy_n(state.coordinates.data(), n, out);
    if (shape.floating_base)
      for (int k = 0; k < 6; ++k)
        if (layout_.base_kept[7 + k]) *out++ = twists_[base_body_](k);
    out = std::copy_n(state.velocities.data() + base_velocities, n, out);
    if (shape.accelerations) {
      if (rates_step_ != step) take_rates(state, step);
      if (shape.floating_base)  // the base is the one free body
        for (int k = 0; k < 6; ++k)
          if (layout_.base_kept[13 + k]) *out++ = twist_rates_[0](k);
      out = std::copy_n(rates_.data() + base_velocities, n, out);
    }
  }
  if (shape.body_accelerations) {
    if (rates_step_ != step) take_rates(state, step);
    for (std::size_t i = 0; i < poses_.size(); ++i, out += body_acceleration_components.size())
      body_acceleration_values(poses_[i], twists_[i], twist_rates_[i], out);
  }
  const Invariants& inv = invariants_;
  for (const double v : {inv.kinetic_energy, inv.potential_energy, inv.total_energy(), inv.angular_momentum.x(),
                         inv.angular_momentum.y(), inv.angular_momentum.z(), inv.linear_momentum.x(),
                         inv.linear_momentum.y(), inv.linear_momentum.z(), inv.orthogonality_error})
    *out++ = v;
  if (shape.normalization) *out++ = space_.normalization_error(state);
  out = std::copy(violations_.begin(), violations_.end(), out);
  if (prescribed_) out = std::copy_n(prescribed_forces_.data(), prescribed_forces_.size(), out);
  if (multiplier_count_ > 0) {  // lambda per constraint row; NaN where the integrator has none yet (t = 0)
    const Eigen::VectorXd* multipliers = run_.integrator->multipliers();
    const bool known = step > 0 && multipliers && multipliers->size() == multiplier_count_;
    for (Eigen::Index k = 0; k < multiplier_count_; ++k)
      *out++ = known ? (*multipliers)(k) : std::numeric_limits<double>::quiet_NaN();
  }
  if (out != row_.data() + row_.size())
    throw std::logic_error("trajectory row: " + std::to_string(out - row_.data()) + " values for " +
                           std::to_string(row_.size()) + " columns (host/run_recorders.cpp and output_schema.cpp disagree)");
}

// Drifts are relative to the largest magnitude the run reaches: for the energy, |E(0)| or the
// largest kinetic energy; for the angular momentum, its largest norm. A system released from
// rest may start with E(0) = 0 and L(0) = 0 (relative to those alone, a drift would be 1e300).
void RunMeasures::record(const RunSample& sample) {
  RunSummary& summary = summary_;
  const Invariants& now = sample.invariants;
  const std::size_t count = summary.constraint_names.size();
  if (sample.step == 0) {
    initial_ = now;
    energy_scale_ = std::max(std::abs(now.total_energy()), now.kinetic_energy);
    momentum_scale_ = now.angular_momentum.norm();
    summary.energy_initial = now.total_energy();
    summary.energy_final = now.total_energy();
    summary.energy_scale = energy_scale_;  // a run of no steps reports the initial state's scales
    summary.angular_momentum_scale = momentum_scale_;
    summary.orthogonality_error_max = now.orthogonality_error;
    summary.normalization_error_max = sample.normalization_error;
    summary.constraint_violation_max.assign(sample.violations.begin(), sample.violations.begin() + static_cast<long>(count));
    summary.velocity_violation_max.assign(sample.violations.begin() + static_cast<long>(count), sample.violations.end());
    previous_time_ = sample.time;
    previous_power_ = sample.prescribed_power;
    return;
  }
  summary.energy_final = now.total_energy();
  energy_scale_ = std::max(energy_scale_, now.kinetic_energy);
  energy_change_max_ = std::max(energy_change_max_, std::abs(now.total_energy() - initial_.total_energy()));
  summary.energy_drift_max = relative_change(energy_change_max_, energy_scale_);
  if (!summary.prescribed_coordinates.empty()) {  // W(t) by the trapezoidal rule in the power tau . q'
    summary.prescribed_work += 0.5 * (sample.time - previous_time_) * (previous_power_ + sample.prescribed_power);
    balance_change_max_ = std::max(balance_change_max_,
                                   std::abs(now.total_energy() - initial_.total_energy() - summary.prescribed_work));
    summary.energy_balance_error_max = relative_change(balance_change_max_, energy_scale_);
  }
  previous_time_ = sample.time;
  previous_power_ = sample.prescribed_power;
  momentum_scale_ = std::max(momentum_scale_, now.angular_momentum.norm());
  momentum_change_max_ = std::max(momentum_change_max_, (now.angular_momentum - initial_.angular_momentum).norm());
  summary.angular_momentum_drift_max = relative_change(momentum_change_max_, momentum_scale_);
  summary.energy_scale = energy_scale_;
  summary.angular_momentum_scale = momentum_scale_;
  summary.orthogonality_error_max = std::max(summary.orthogonality_error_max, now.orthogonality_error);
  summary.normalization_error_max = std::max(summary.normalization_error_max, sample.normalization_error);
  for (std::size_t i = 0; i < count; ++i) {
    summary.constraint_violation_max[i] = std::max(summary.constraint_violation_max[i], sample.violations[i]);
    summary.velocity_violation_max[i] = std::max(summary.velocity_violation_max[i], sample.violations[count + i]);
  }
}

RunFiles::RunFiles(const Run& run, const std::filesystem::path& folder) : run_(run) {
  prepare_output_folder(folder);
  if (run.write_trajectory) {
    trajectory_ = std::make_unique<AtomicFile>(folder / "trajectory.csv");
    trajectory_->stream() << std::setprecision(17);
  }
  summary_ = std::make_unique<AtomicFile>(folder / "summary.json");
}

void RunFiles::begin(const std::vector<std::string>& columns) {
  if (!trajectory_) return;
  auto& out = trajectory_->stream();
  for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << columns[c];
  out << '\n';
}

void RunFiles::record(const RunSample& sample) {
  if (!trajectory_) return;
  if ((sample.step & 1023) == 1023) trajectory_->check();  // a full disk stops a long run early
  if (sample.row.empty()) return;
  auto& out = trajectory_->stream();
  for (std::size_t c = 0; c < sample.row.size(); ++c) {
    if (c) out << ',';
    out << sample.row[c];
  }
  out << '\n';
}

void RunFiles::end(const RunSummary& summary) {
  summary_->stream() << summary_json(run_, summary) << '\n';
  if (trajectory_) trajectory_->commit();
  summary_->commit();
}

void RunProgress::record(const RunSample& sample) {
  if ((sample.step & 63) != 0 || sample.step == 0 || !line_.due()) return;
  char text[80];
  std::snprintf(text, sizeof text, "t = %.4g / %.4g s  (%3.0f %%)", sample.time, end_time_, 100.0 * sample.time / end_time_);
  line_.show(text);
}

}  // namespace liembs
