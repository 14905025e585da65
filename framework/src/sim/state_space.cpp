#include <liembs/sim/state_space.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace liembs {

StateSpace::StateSpace(const Group& group, std::size_t free_bodies, std::size_t joint_coordinates)
    : group_(&group), body_(group.body_coordinates()), free_bodies_(free_bodies), joint_coordinates_(joint_coordinates) {}

void StateSpace::check_layout(const State& state, Eigen::Index increment_size, const char* function) const {
  const auto dimension = static_cast<Eigen::Index>(velocity_dimension());
  if (increment_size != dimension || state.poses.size() != free_bodies_ ||
      state.chart.size() != static_cast<Eigen::Index>(chart_dimension()) ||
      state.coordinates.size() != static_cast<Eigen::Index>(joint_coordinates_))
    throw std::logic_error(std::string("StateSpace::") + function + ": the increment has " +
                           std::to_string(increment_size) + " numbers and the state " +
                           std::to_string(state.poses.size()) + " poses, " + std::to_string(state.chart.size()) +
                           " chart coordinates and " + std::to_string(state.coordinates.size()) +
                           " coordinates; the state space has " + std::to_string(dimension) +
                           " velocity coordinates and " + std::to_string(chart_dimension()) + " chart coordinates");
}

void StateSpace::retract_configuration(State& state, const Eigen::VectorXd& configuration_increment) const {
  check_layout(state, configuration_increment.size(), "retract");
  group_->retract(state.poses, state.chart.data(), configuration_increment.data());
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
  if (body_.vector_chart) {
    out = velocities;
    return;
  }
  group_->dexpinv_left(free_bodies_, configuration_increment.data(), velocities.data(), out.data());
  if (joint_coordinates_ > 0) {
    const auto n = static_cast<Eigen::Index>(joint_coordinates_);
    out.tail(n) = velocities.tail(n);
  }
}

double StateSpace::largest_rotation(const double* configuration_increment) const {
  if (body_.vector_chart) return 0.0;
  double largest = 0.0;
  for (std::size_t body = 0; body < free_bodies_; ++body)
    largest = std::max(largest, Eigen::Map<const Eigen::Vector3d>(configuration_increment + body * body_.velocity).norm());
  return largest;
}

void StateSpace::configuration_scale(const State& state, Eigen::VectorXd& scale) const {
  scale.resize(static_cast<Eigen::Index>(velocity_dimension()));
  const Eigen::Index nv = body_.velocity;
  for (std::size_t body = 0; body < free_bodies_; ++body) {
    const Eigen::Index offset = static_cast<Eigen::Index>(body) * nv;
    scale.segment(offset, body_.rotation).setOnes();
    scale.segment(offset + body_.rotation, nv - body_.rotation).setConstant(state.poses[body].r.norm());
  }
  scale.tail(static_cast<Eigen::Index>(joint_coordinates_)) = state.coordinates.cwiseAbs();
}

bool StateSpace::update_charts(State& state) const {
  if (body_.chart == 0 || free_bodies_ == 0) return false;
  return group_->update_charts(state.poses, state.chart.data(), state.velocities.data());
}

double StateSpace::normalization_error(const State& state) const {
  if (body_.internal_constraints == 0 || free_bodies_ == 0) return 0.0;
  return group_->normalization_error(free_bodies_, state.chart.data());
}

bool StateSpace::is_finite(const State& state) {
  for (const auto& pose : state.poses)
    if (!pose.R.allFinite() || !pose.r.allFinite()) return false;
  return state.chart.allFinite() && state.coordinates.allFinite() && state.velocities.allFinite() &&
         std::isfinite(state.time);
}

}  // namespace liembs
