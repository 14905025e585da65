#pragma once
// A test DAE shared by the integrator tests: a point mass on a massless rod of length L in
// the vertical plane, in Cartesian coordinates q = (x, y), y up (no free bodies, two joint
// coordinates):
//   M = m 1,  Q = (0, -m g),  g(q) = x^2 + y^2 - L^2,  J = 2 (x, y),  eta = -J' V = -2 |V|^2,
// and its exact reduction to the angle theta from the downward vertical,
// theta'' = -(g/L) sin theta, integrated tightly as the reference.
// With length_amplitude != 0 the rod length is prescribed, L(t) = L0 (1 + a sin(w t)): a
// rheonomic constraint g = |q|^2 - L(t)^2 with J V = nu = (L^2)' and
// eta = -2 |V|^2 + (L^2)''; the reference is then theta'' = -(g sin theta + 2 L' theta') / L.
// The derivatives of the Newton matrices are given in closed form (analytic_derivatives):
//   C = -dQ/dV = 0,   K = d(M a + J^T lambda - Q)/dq = 2 lambda 1,   P = d(J V - nu)/dq = 2 V^T.
#include <liembs/error.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

namespace liembs::testing {

class CartesianPendulum final : public ForwardDynamics, public ConstrainedSystem {
 public:
  double mass = 0.7, length = 1.3, gravity = 9.81;
  double initial_angle = 1.2, initial_angle_rate = 0.4;  // from the downward vertical
  double forces_fail_after = std::numeric_limits<double>::infinity();  // Q = NaN afterwards
  double derivatives_throw_after = std::numeric_limits<double>::infinity();  // evaluate_derivatives throws afterwards
  double length_amplitude = 0.0, length_frequency = 2.0;  // a, w of the prescribed length

  CartesianPendulum() = default;
  CartesianPendulum(double mass_, double length_, double angle, double angle_rate)
      : mass(mass_), length(length_), initial_angle(angle), initial_angle_rate(angle_rate) {}

  // --- ForwardDynamics ---
  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    evaluate(state, terms_, dae::all);
    solve_index1(terms_, rates);
  }
  std::size_t free_bodies() const override { return 0; }
  std::size_t joint_coordinates() const override { return 2; }
  State initial_state() const override { return state_at(initial_angle, initial_angle_rate); }
  void body_motion(const State&, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses.clear();
    twists.clear();
  }
  ConstrainedSystem* constraints() override { return this; }

  // --- ConstrainedSystem ---
  Eigen::Index constraint_count() const override { return 1; }
  const std::vector<ConstraintBlock>& blocks() const override { return blocks_; }
  void evaluate(const State& state, DaeTerms& terms, unsigned what) override {
    const Eigen::Vector2d q = state.coordinates, V = state.velocities;
    if (what & dae::mass) terms.mass = mass * Eigen::Matrix2d::Identity();
    if (what & dae::forces) {
      terms.forces = Eigen::Vector2d(0.0, -mass * gravity);
      if (state.time > forces_fail_after) terms.forces.setConstant(std::numeric_limits<double>::quiet_NaN());
    }
    const auto [L, L_rate, L_acceleration] = length_at(state.time);
    if (what & dae::residual) terms.residual = Eigen::VectorXd::Constant(1, q.squaredNorm() - L * L);
    if (what & dae::jacobian) terms.jacobian = 2.0 * q.transpose();
    if (what & dae::velocity_rhs) terms.velocity_rhs = Eigen::VectorXd::Constant(1, 2.0 * L * L_rate);
    if (what & dae::acceleration_rhs)
      terms.acceleration_rhs =
          Eigen::VectorXd::Constant(1, -2.0 * V.squaredNorm() + 2.0 * (L_rate * L_rate + L * L_acceleration));
  }

  unsigned analytic_derivatives() const override { return dae::damping | dae::stiffness | dae::velocity_constraint; }
  void evaluate_derivatives(const State& state, const Eigen::VectorXd&, const Eigen::VectorXd& multipliers,
                            DaeDerivatives& derivatives, unsigned what) override {
    if (state.time > derivatives_throw_after)
      throw SimulationError("pendulum derivatives unavailable at t = " + std::to_string(state.time));
    if (what & dae::damping) derivatives.damping.setZero(2, 2);
    if (what & dae::stiffness) derivatives.stiffness = 2.0 * multipliers(0) * Eigen::Matrix2d::Identity();
    if (what & dae::velocity_constraint) derivatives.velocity_constraint = 2.0 * state.velocities.transpose();
  }

  // L(t), L'(t), L''(t).
  std::tuple<double, double, double> length_at(double t) const {
    const double a = length_amplitude, w = length_frequency;
    return {length * (1.0 + a * std::sin(w * t)), length * a * w * std::cos(w * t), -length * a * w * w * std::sin(w * t)};
  }
  Eigen::Vector2d position(double angle, double t = 0.0) const {
    const double L = std::get<0>(length_at(t));
    return {L * std::sin(angle), -L * std::cos(angle)};
  }
  Eigen::Vector2d velocity(double angle, double rate, double t = 0.0) const {
    const auto [L, L_rate, L_acceleration] = length_at(t);
    (void)L_acceleration;
    return {L * std::cos(angle) * rate + L_rate * std::sin(angle), L * std::sin(angle) * rate - L_rate * std::cos(angle)};
  }
  State state_at(double angle, double rate, double t = 0.0) const {
    State state;
    state.time = t;
    state.coordinates = position(angle, t);
    state.velocities = velocity(angle, rate, t);
    return state;
  }
  // Kinetic plus potential energy, zero at rest (y = -L).
  double energy(const State& state) const {
    return 0.5 * mass * state.velocities.squaredNorm() + mass * gravity * (state.coordinates.y() + length);
  }

  // (theta, theta') at end_time by classical RK4 with 40000 steps.
  std::pair<double, double> angle_reference(double end_time) const {
    auto f = [this](double t, const Eigen::Vector2d& x) {
      const auto [L, L_rate, L_acceleration] = length_at(t);
      (void)L_acceleration;
      return Eigen::Vector2d(x[1], -(gravity * std::sin(x[0]) + 2.0 * L_rate * x[1]) / L);
    };
    Eigen::Vector2d x(initial_angle, initial_angle_rate);
    const int steps = 40000;
    const double h = end_time / steps;
    for (int i = 0; i < steps; ++i) {
      const double t = i * h;
      const Eigen::Vector2d k1 = f(t, x), k2 = f(t + 0.5 * h, x + 0.5 * h * k1), k3 = f(t + 0.5 * h, x + 0.5 * h * k2),
                            k4 = f(t + h, x + h * k3);
      x += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    return {x[0], x[1]};
  }
  State reference_state(double end_time) const {
    const auto [angle, rate] = angle_reference(end_time);
    return state_at(angle, rate, end_time);
  }

 private:
  std::vector<ConstraintBlock> blocks_{{"rod", 0, 1}};
  DaeTerms terms_;
};

}  // namespace liembs::testing
