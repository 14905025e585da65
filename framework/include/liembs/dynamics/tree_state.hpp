#pragma once
// The state a tree algorithm takes: the floating base's pose and body-fixed twist (if the
// tree floats) and the joint coordinates and rates. Generalized velocities and forces are
// ordered (base body twist (omega, v) if floating, then joint rates); the base's force
// components are the body-frame wrench (moment about the base origin, force).
#include <liembs/lie/types.hpp>

namespace liembs {

struct TreeState {
  Pose base;                       // ignored for a fixed base
  Vec6 base_twist = Vec6::Zero();  // body-fixed (omega, R^T r'); ignored for a fixed base
  Eigen::VectorXd q, qd;           // joint coordinates and rates, one per node
};

}  // namespace liembs
