#pragma once
// What a twist-representation plugin provides for the derivatives of a tree's equations of
// motion (paper 000 section 6): analytic partial derivatives of inverse and forward dynamics
// and the inverse-dynamics regressor (docs/derivatives.md). One virtual call per algorithm
// call; the recursions inside are fixed-size Eigen code (derivative_algorithms.hpp).
//
// Coordinates as in tree_dynamics.hpp: u = (base body twist (omega, R^T r') if the base
// floats, q'), forces = (base body-frame wrench, joint forces). A derivative "with respect to
// q" has one column per generalized velocity: for a floating base its first six columns are
// the derivative along the retraction C exp(xi) of the base pose, xi = (omega, v) the
// body-frame twist increment (the base twist held fixed as a body twist); then one column per
// joint coordinate.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>

#include <string_view>

namespace liembs {

struct InverseDynamicsDerivatives {
  Eigen::VectorXd force;           // tau = ID(q, u, u')
  Eigen::MatrixXd force_by_q;      // d tau / d q
  Eigen::MatrixXd force_by_u;      // d tau / d u
  Eigen::MatrixXd mass;            // d tau / d u' = M(q)
};

struct ForwardDynamicsDerivatives {
  Eigen::VectorXd acceleration;            // u' = FD(q, u, tau)
  Eigen::MatrixXd acceleration_by_q;       // d u' / d q
  Eigen::MatrixXd acceleration_by_u;       // d u' / d u
  Eigen::MatrixXd acceleration_by_force;   // d u' / d tau = M^-1
};

// The inertial parameters of one body, in this order (kInertialParameters per body, bodies in
// model order): m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz, with c the centre of
// mass and I the rotational inertia about the body-frame origin, both in the body frame.
inline constexpr int kInertialParameters = 10;

class TreeDerivatives {
 public:
  virtual ~TreeDerivatives();
  virtual std::string_view representation() const = 0;
  virtual const KinematicTree& tree() const = 0;

  // tau = ID(q, u, u') and its partial derivatives (000 section 6.1).
  virtual void inverse_dynamics_derivatives(const TreeState& state, const Eigen::VectorXd& acceleration,
                                            InverseDynamicsDerivatives& out) = 0;
  // u' = FD(q, u, tau) and its partial derivatives: d u'/d x = -M^-1 d tau/d x at u'.
  virtual void forward_dynamics_derivatives(const TreeState& state, const Eigen::VectorXd& force,
                                            ForwardDynamicsDerivatives& out) = 0;
  // Y(q, u, u') with ID(q, u, u') = Y pi + (the model's constant loads' terms), pi the
  // inertial parameters of every model body (kInertialParameters each, model order).
  virtual void inverse_dynamics_regressor(const TreeState& state, const Eigen::VectorXd& acceleration,
                                          Eigen::MatrixXd& regressor) = 0;
};

}  // namespace liembs
