#pragma once
// The state space of a run as the integrators see it: n free bodies in one configuration
// parameterization plus a vector-space part. X exp(xi, a) = (C exp(xi_C), q + xi_q, V + a)
// (002 eqs. 28, 33); on a chart the body part is an addition too (plugin/group.hpp).
#include <liembs/plugin/group.hpp>
#include <liembs/plugin/state.hpp>

namespace liembs {

class StateSpace {
 public:
  StateSpace(const Group& group, std::size_t free_bodies, std::size_t joint_coordinates);

  const Group& group() const { return *group_; }
  const BodyCoordinates& body_coordinates() const { return body_; }
  std::size_t free_bodies() const { return free_bodies_; }
  std::size_t joint_coordinates() const { return joint_coordinates_; }
  // Velocity coordinates of the free bodies (the joint rates follow them).
  std::size_t body_velocity_dimension() const { return free_bodies_ * static_cast<std::size_t>(body_.velocity); }
  // Dimension of the velocity coordinates (= of a configuration increment).
  std::size_t velocity_dimension() const { return body_velocity_dimension() + joint_coordinates_; }
  std::size_t chart_dimension() const { return free_bodies_ * static_cast<std::size_t>(body_.chart); }

  // state <- state * exp(configuration_increment, velocity_increment); both increments have
  // velocity_dimension() numbers, as have the state's velocities.
  void retract(State& state, const Eigen::VectorXd& configuration_increment,
               const Eigen::VectorXd& velocity_increment) const;
  // The configuration part only: (C, q) <- (C exp(xi_C), q + xi_q); velocities untouched.
  void retract_configuration(State& state, const Eigen::VectorXd& configuration_increment) const;
  // out = dexp^-1_{-increment}(velocities), identity on the vector-space part.
  void dexpinv_left(const Eigen::VectorXd& configuration_increment,
                    const Eigen::VectorXd& velocities, Eigen::VectorXd& out) const;

  // The largest rotation angle |xi_omega| of a free body in a configuration increment on a
  // Lie group (where dexp^-1 becomes singular at 2 pi); 0 on a chart.
  double largest_rotation(const double* configuration_increment) const;
  // A scale per velocity coordinate for configuration increments: 1 for rotation coordinates,
  // |r| for positions, |q| for joint coordinates (error weights that do not depend on a chart).
  void configuration_scale(const State& state, Eigen::VectorXd& scale) const;
  // Switches the charts that came close to their singularity (Group::update_charts); true if
  // the state's coordinates changed (the pose and body twists are kept).
  bool update_charts(State& state) const;
  // |p^T p - 1| and the like (Group::normalization_error); 0 without such an invariant.
  double normalization_error(const State& state) const;

  // True when every number of the state is finite.
  static bool is_finite(const State& state);

 private:
  void check_layout(const State& state, Eigen::Index increment_size, const char* function) const;

  const Group* group_;
  BodyCoordinates body_;
  std::size_t free_bodies_;
  std::size_t joint_coordinates_;
};

}  // namespace liembs
