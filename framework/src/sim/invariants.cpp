#include <liembs/sim/invariants.hpp>

namespace liembs {

Eigen::VectorXd body_twists(const Group& group, const State& state) {
  Eigen::VectorXd twists(6 * static_cast<Eigen::Index>(state.poses.size()));
  group.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twists.data());
  return twists;
}

State initial_state(const Model& model, const Group& group) {
  State state;
  const auto n = static_cast<Eigen::Index>(model.bodies.size());
  Eigen::VectorXd twists(6 * n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const RigidBody& body = model.bodies[static_cast<std::size_t>(i)];
    state.poses.push_back(body.reference_pose);
    twists.segment<3>(6 * i) = body.initial_angular_velocity;
    twists.segment<3>(6 * i + 3) = body.reference_pose.R.transpose() * body.initial_linear_velocity;
  }
  const BodyCoordinates coordinates = group.body_coordinates();
  state.chart.resize(n * coordinates.chart);
  group.chart_from_poses(state.poses, state.chart.data());
  state.velocities.resize(n * coordinates.velocity);
  group.from_body_twists(state.poses, state.chart.data(), twists.data(), state.velocities.data());
  return state;
}

Invariants compute_invariants(const Model& model, const std::vector<Pose>& poses, const std::vector<Vec6>& twists) {
  Invariants result;
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const RigidBody& body = model.bodies[i];
    const Pose& pose = poses[i];
    const Vec6& twist = twists[i];
    const Vec6 momentum = body.spatial_inertia() * twist;  // (L about origin, p), body frame
    result.kinetic_energy += 0.5 * twist.dot(momentum);
    result.potential_energy -= body.mass * model.gravity.dot(pose.r + pose.R * body.center_of_mass);
    const Vec3 linear = pose.R * momentum.tail<3>();
    result.linear_momentum += linear;
    result.angular_momentum += pose.R * momentum.head<3>() + pose.r.cross(linear);
    result.orthogonality_error =
        std::max(result.orthogonality_error, (pose.R.transpose() * pose.R - Mat3::Identity()).norm());
  }
  return result;
}

}  // namespace liembs
