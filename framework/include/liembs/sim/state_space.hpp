#pragma once
// The state space of a run as the integrators see it: n free bodies on one group plus a
// vector-space part. X exp(xi, a) = (C exp(xi_C), q + xi_q, V + a)   (002 eqs. 28, 33).
#include <liembs/plugin/group.hpp>
#include <liembs/sim/state.hpp>

namespace liembs {

class StateSpace {
 public:
  StateSpace(const Group& group, std::size_t free_bodies, std::size_t joint_coordinates);

  const Group& group() const { return *group_; }
  std::size_t free_bodies() const { return free_bodies_; }
  // Dimension of the velocity coordinates (= of the configuration's Lie algebra).
  std::size_t velocity_dimension() const { return 6 * free_bodies_ + joint_coordinates_; }

  // state <- state * exp(configuration_increment, velocity_increment); both increments have
  // velocity_dimension() numbers, as have the state's velocities.
  void retract(State& state, const Eigen::VectorXd& configuration_increment,
               const Eigen::VectorXd& velocity_increment) const;
  // The configuration part only: (C, q) <- (C exp(xi_C), q + xi_q); velocities untouched.
  void retract_configuration(State& state, const Eigen::VectorXd& configuration_increment) const;
  // out = dexp^-1_{-increment}(velocities), identity on the vector-space part.
  void dexpinv_left(const Eigen::VectorXd& configuration_increment,
                    const Eigen::VectorXd& velocities, Eigen::VectorXd& out) const;
  // True when every number of the state is finite.
  static bool is_finite(const State& state);

 private:
  const Group* group_;
  std::size_t free_bodies_;
  std::size_t joint_coordinates_;
};

}  // namespace liembs
