#include <liembs/sim/state_space.hpp>

#include <stdexcept>
#include <string>

namespace liembs {

StateSpace::StateSpace(const Group& group, std::size_t free_bodies, std::size_t joint_coordinates)
    : group_(&group), free_bodies_(free_bodies), joint_coordinates_(joint_coordinates) {}

void StateSpace::retract_configuration(State& state, const Eigen::VectorXd& configuration_increment) const {
  const auto dimension = static_cast<Eigen::Index>(velocity_dimension());
  if (configuration_increment.size() != dimension || state.poses.size() != free_bodies_ ||
      state.coordinates.size() != static_cast<Eigen::Index>(joint_coordinates_))
    throw std::logic_error("StateSpace::retract: the increment has " + std::to_string(configuration_increment.size()) +
                           " numbers and the state " + std::to_string(state.poses.size()) + " poses and " +
                           std::to_string(state.coordinates.size()) + " coordinates; the state space has " +
                           std::to_string(dimension) + " velocity coordinates");
  group_->retract(state.poses, configuration_increment.data());
  if (joint_coordinates_ > 0)
    state.coordinates += configuration_increment.tail(static_cast<Eigen::Index>(joint_coordinates_));
}

void StateSpace::retract(State& state, const Eigen::VectorXd& configuration_increment,
                         const Eigen::VectorXd& velocity_increment) const {
  retract_configuration(state, configuration_increment);
  if (velocity_increment.size() != state.velocities.size())
    throw std::logic_error("StateSpace::retract: a velocity increment of " + std::to_string(velocity_increment.size()) +
                           " numbers for " + std::to_string(state.velocities.size()) + " velocities");
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
