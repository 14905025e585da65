#pragma once
// A point of the state space S = G^n x R^m x R^k (paper 002 eqs. 26, 31): the configuration
// of the free bodies in the run's parameterization (plugin/group.hpp), joint coordinates,
// and all velocity coordinates.
#include <liembs/lie/types.hpp>

#include <vector>

namespace liembs {

struct State {
  double time = 0.0;
  std::vector<Pose> poses;       // one per free body, C_i = (R_i, r_i); derived from `chart` on a chart
  Eigen::VectorXd chart;         // chart coordinates of the free bodies (p, Euler angles); empty on a Lie group
  Eigen::VectorXd coordinates;   // joint coordinates (vector-space part)
  // Velocity coordinates: BodyCoordinates::velocity per free body in the parameterization's
  // coordinates, followed by the joint rates.
  Eigen::VectorXd velocities;
};

}  // namespace liembs
