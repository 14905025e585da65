#pragma once
// The r-th time derivatives of inverse and forward dynamics by nested first-order forward
// mode (nested_dual.hpp) on the scalar RNEA and ABA: paper 003's CasADi-style baseline, whose
// cost grows exponentially in r. Same matrices as HigherOrderDynamics (column k of rates =
// u^(k+1), of forces = tau^(k)); `depth` = r is a compile-time constant.
//
// Forward dynamics, as the paper's CasADi FD: the derivatives of u' = ABA(q(t), q'(t), ...)
// along a given motion, so the motion's u^(1..r) (rates, columns 0..r-1) are inputs and
// u^(1..r+1) the outputs; on the motion forward dynamics produces they equal H-GABI's.
#include "nested_dual.hpp"
#include "scalar_tree_dynamics.hpp"
#include "time_series.hpp"

#include <liembs/dynamics/tree_state.hpp>

#include <Eigen/Core>

namespace liembs::ad_baseline {

// Derivatives 0..depth of every base input (gamma, V, V') and joint input (q, q', q''),
// from Taylor coefficients: row = component, column k = x^(k).
struct MotionDerivatives {
  Eigen::MatrixXd gamma, twist, joints;  // joints: q^(0..depth+2) per row
};

inline void motion_derivatives(const ScalarTree& tree, const TreeState& state, const Eigen::MatrixXd& rates, int depth,
                               MotionDerivatives& out) {
  const int offset = tree.floating ? 6 : 0, columns = depth + 3;
  joint_coefficients(state, rates, offset, columns - 1, out.joints);
  for (int k = 0; k < columns; ++k) out.joints.col(k) *= factorial(k);
  if (!tree.floating) return;
  const int twist_columns = depth + 2;  // V^(0..depth+1): the rates hold V^(1..depth+1), one column fewer than q
  out.twist.resize(6, twist_columns);
  out.twist.col(0) = state.base_twist;
  out.twist.rightCols(twist_columns - 1) = rates.topLeftCorner(6, twist_columns - 1);
  Eigen::MatrixXd w(3, twist_columns);
  for (int k = 0; k < twist_columns; ++k) w.col(k) = out.twist.block(0, k, 3, 1) / factorial(k);
  gravity_coefficients(state.base.R, tree.gravity, w, twist_columns - 1, out.gamma);
  for (int k = 0; k < twist_columns; ++k) out.gamma.col(k) *= factorial(k);
}

// Inverse dynamics: forces (nv x (depth+1)) from rates (nv x >= depth+1).
template <int depth>
void nested_inverse_dynamics(const ScalarTree& tree, const TreeState& state, const Eigen::MatrixXd& rates,
                             MotionDerivatives& motion, Eigen::MatrixXd& forces) {
  using S = Nested<depth>;
  motion_derivatives(tree, state, rates, depth, motion);
  const int n = tree.dof(), nv = tree.velocity_dimension();
  std::vector<S> q(static_cast<std::size_t>(n)), qd(q.size()), qdd(q.size()), force(static_cast<std::size_t>(nv));
  std::array<S, 3> gamma;
  std::array<S, 6> V, A;
  const auto row = [](const Eigen::MatrixXd& m, int i, int first) {
    Eigen::VectorXd values = m.row(i).transpose();
    return seed<depth>(values.data(), first);
  };
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    q[u] = row(motion.joints, i, 0), qd[u] = row(motion.joints, i, 1), qdd[u] = row(motion.joints, i, 2);
  }
  if (tree.floating) {
    for (int k = 0; k < 3; ++k) gamma[static_cast<std::size_t>(k)] = row(motion.gamma, k, 0);
    for (int k = 0; k < 6; ++k)
      V[static_cast<std::size_t>(k)] = row(motion.twist, k, 0), A[static_cast<std::size_t>(k)] = row(motion.twist, k, 1);
  }
  inverse_dynamics<S>(tree, gamma.data(), V.data(), A.data(), q.data(), qd.data(), qdd.data(), force.data());
  forces.resize(nv, depth + 1);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k <= depth; ++k) forces(i, k) = derivative<depth>(force[static_cast<std::size_t>(i)], k);
}

// Forward dynamics along a motion: out (nv x (depth+1)) = u^(1..depth+1) from the state,
// forces (tau^(0..depth)) and the motion's u^(1..depth) (rates, columns 0..depth-1).
template <int depth>
void nested_forward_dynamics(const ScalarTree& tree, const TreeState& state, const Eigen::MatrixXd& forces,
                             const Eigen::MatrixXd& rates, MotionDerivatives& motion, Eigen::MatrixXd& out) {
  using S = Nested<depth>;
  const int n = tree.dof(), nv = tree.velocity_dimension();
  // u^(depth+1) is not needed (and not known): pad the rates with a zero column.
  Eigen::MatrixXd padded = Eigen::MatrixXd::Zero(nv, depth + 2);
  padded.leftCols(depth) = rates.leftCols(depth);
  motion_derivatives(tree, state, padded, depth, motion);
  std::vector<S> q(static_cast<std::size_t>(n)), qd(q.size()), tau(static_cast<std::size_t>(nv)), acceleration(tau.size());
  std::array<S, 3> gamma;
  std::array<S, 6> V;
  const auto row = [](const Eigen::MatrixXd& m, int i, int first) {
    Eigen::VectorXd values = m.row(i).transpose();
    return seed<depth>(values.data(), first);
  };
  for (int i = 0; i < n; ++i) q[static_cast<std::size_t>(i)] = row(motion.joints, i, 0), qd[static_cast<std::size_t>(i)] = row(motion.joints, i, 1);
  for (int i = 0; i < nv; ++i) tau[static_cast<std::size_t>(i)] = row(forces, i, 0);
  if (tree.floating) {
    for (int k = 0; k < 3; ++k) gamma[static_cast<std::size_t>(k)] = row(motion.gamma, k, 0);
    for (int k = 0; k < 6; ++k) V[static_cast<std::size_t>(k)] = row(motion.twist, k, 0);
  }
  forward_dynamics<S>(tree, gamma.data(), V.data(), q.data(), qd.data(), tau.data(), acceleration.data());
  out.resize(nv, depth + 1);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k <= depth; ++k) out(i, k) = derivative<depth>(acceleration[static_cast<std::size_t>(i)], k);
}

}  // namespace liembs::ad_baseline
