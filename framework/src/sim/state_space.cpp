#include <liembs/sim/state_space.hpp>

namespace liembs {

StateSpace::StateSpace(const Group& group, std::size_t free_bodies, std::size_t joint_coordinates)
    : group_(&group), free_bodies_(free_bodies), joint_coordinates_(joint_coordinates) {}

void StateSpace::retract(State& state, const Eigen::VectorXd& configuration_increment,
                         const Eigen::VectorXd& velocity_increment) const {
  group_->retract(state.poses, configuration_increment.data());
  if (joint_coordinates_ > 0)
    state.coordinates += configuration_increment.tail(static_cast<Eigen::Index>(joint_coordinates_));
  state.velocities += velocity_increment;
}

void StateSpace::dexpinv_left(const Eigen::VectorXd& configuration_increment,
                              const Eigen::VectorXd& velocities, Eigen::VectorXd& out) const {
  out.resize(velocities.size());
  group_->dexpinv_left(free_bodies_, configuration_increment.data(), velocities.data(), out.data());
  if (joint_coordinates_ > 0) {
    const auto n = static_cast<Eigen::Index>(joint_coordinates_);
    out.tail(n) = velocities.tail(n);
  }
}

bool StateSpace::is_finite(const State& state) {
  for (const auto& pose : state.poses)
    if (!pose.R.allFinite() || !pose.r.allFinite()) return false;
  return state.coordinates.allFinite() && state.velocities.allFinite() && std::isfinite(state.time);
}

}  // namespace liembs
