#pragma once
// A point of the state space S = G^n x R^m x R^k (paper 002 eqs. 26, 31): the poses of
// the free bodies on their group, joint coordinates, and all velocity coordinates.
#include <liembs/lie/types.hpp>

#include <vector>

namespace liembs {

struct State {
  double time = 0.0;
  std::vector<Pose> poses;       // one per free body, C_i = (R_i, r_i)
  Eigen::VectorXd coordinates;   // joint coordinates (vector-space part)
  // Velocity coordinates: 6 per free body in the group's convention (see
  // VelocityConvention), followed by the joint rates.
  Eigen::VectorXd velocities;
};

}  // namespace liembs
