#pragma once
// The inputs of the scalar RNEA/ABA (scalar_tree_dynamics.hpp) along a motion, as Taylor
// coefficients x_k = x^(k) / k! per input component, from a LieMBS state and the derivative
// matrices of HigherOrderDynamics (column k of `rates` = u^(k+1)).
#include <liembs/dynamics/tree_state.hpp>

#include <Eigen/Core>

#include <cmath>

namespace liembs::ad_baseline {

inline double factorial(int k) { return std::tgamma(k + 1.0); }

// Taylor coefficients (columns 0..degree) of the joint coordinates q (n rows) from q, q' and
// the joint rows of `rates` (u^(k+1), k = 0..): q_0 = q, q_1 = q', q_k = q^(k) / k!.
inline void joint_coefficients(const TreeState& state, const Eigen::MatrixXd& rates, int offset, int degree,
                               Eigen::MatrixXd& q) {
  const int n = static_cast<int>(state.q.size());
  q.resize(n, degree + 1);
  for (int k = 0; k <= degree; ++k)
    q.col(k) = k == 0 ? Eigen::VectorXd(state.q)
                      : k == 1 ? Eigen::VectorXd(state.qd) : Eigen::VectorXd(rates.block(offset, k - 2, n, 1) / factorial(k));
}

// Gravity in base coordinates gamma = R^T g along the motion, R' = R w~: gamma' = gamma x w,
// so (k+1) gamma_{k+1} = sum_{j<=k} gamma_j x w_{k-j}; w holds the base angular velocity's
// Taylor coefficients (3 x (degree+1), column k = w^(k) / k!).
inline void gravity_coefficients(const Mat3& R, const Vec3& g, const Eigen::MatrixXd& w, int degree, Eigen::MatrixXd& gamma) {
  gamma.resize(3, degree + 1);
  gamma.col(0) = R.transpose() * g;
  for (int k = 0; k < degree; ++k) {
    Vec3 sum = Vec3::Zero();
    for (int j = 0; j <= k; ++j) sum += Vec3(gamma.col(j)).cross(Vec3(w.col(k - j)));
    gamma.col(k + 1) = sum / (k + 1.0);
  }
}

}  // namespace liembs::ad_baseline
