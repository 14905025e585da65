#pragma once
// What a twist-representation plugin provides for a compiled tree: the recursive
// algorithms of papers 000/001 instantiated with its representation policy
// (liembs/dynamics/representations.hpp, liembs/dynamics/recursive_algorithms.hpp).
// One virtual call per algorithm call; the recursions inside are fixed-size Eigen code.
//
// Generalized coordinates: u = (base body twist (omega, R^T r') if the base floats, q').
// Generalized forces: (base body-frame wrench (moment about the base origin, force), joint
// forces). Gravity (KinematicTree::gravity) and the model's constant loads are included.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>

#include <memory>
#include <string_view>
#include <vector>

namespace liembs {

using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;

// Poses, body-fixed twists and body-fixed accelerations (time derivatives of the body-fixed
// twists) of every model body.
struct BodyKinematics {
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  std::vector<Vec6> accelerations;
};

class TreeDynamics {
 public:
  virtual ~TreeDynamics();
  virtual std::string_view representation() const = 0;
  virtual const KinematicTree& tree() const = 0;

  // Recursive Newton-Euler: force = M(q) a + C(q, u) u + gravity and load terms.
  virtual void inverse_dynamics(const TreeState& state, const Eigen::VectorXd& acceleration,
                                Eigen::VectorXd& force) = 0;
  // Articulated-body algorithm: a = M^-1 (force - C u - gravity and load terms).
  virtual void forward_dynamics(const TreeState& state, const Eigen::VectorXd& force,
                                Eigen::VectorXd& acceleration) = 0;
  // Composite-rigid-body algorithm.
  virtual void mass_matrix(const TreeState& state, Eigen::MatrixXd& mass) = 0;
  // Forward dynamics by CRBA + Cholesky (bias from RNEA with a = 0).
  virtual void forward_dynamics_cholesky(const TreeState& state, const Eigen::VectorXd& force,
                                         Eigen::VectorXd& acceleration) = 0;
  // A Coriolis matrix with C u = the velocity terms of inverse_dynamics and M' - 2C skew.
  virtual void coriolis_matrix(const TreeState& state, Eigen::MatrixXd& coriolis) = 0;
  // Gravity and load terms alone (inverse dynamics at u = 0, a = 0).
  virtual void gravity_forces(const TreeState& state, Eigen::VectorXd& force) = 0;

  virtual void body_kinematics(const TreeState& state, const Eigen::VectorXd& acceleration,
                               BodyKinematics& kinematics) = 0;
  // Body Jacobians J^b_b (body twist = J^b_b u) of every model body and, if requested, their
  // time derivatives.
  virtual void body_jacobians(const TreeState& state, std::vector<Matrix6X>& jacobians,
                              std::vector<Matrix6X>* jacobian_rates) = 0;
};

}  // namespace liembs
