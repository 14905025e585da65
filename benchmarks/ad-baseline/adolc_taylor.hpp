#pragma once
// ADOL-C baseline for the higher-order dynamics: the scalar RNEA and ABA
// (scalar_tree_dynamics.hpp) taped once on adouble, then univariate Taylor coefficients
// propagated through the tape in forward mode, forward(tag, m, n, d, keep, X, Y) with degree
// d: the efficient way to get time derivatives with AD. Taylor coefficients are x^(k) / k!.
// Same matrices as HigherOrderDynamics (column k of rates = u^(k+1), of forces = tau^(k)).
//
// The tapes have no value-dependent branches, so one tape serves every state.
#include "scalar_tree_dynamics.hpp"

#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_state.hpp>

#include <Eigen/Core>

#include <memory>
#include <utility>
#include <vector>

namespace liembs::ad_baseline {

// Taylor buffers in ADOL-C's layout (double** of rows x columns), grown on demand.
class TaylorBuffer {
 public:
  TaylorBuffer() = default;
  TaylorBuffer(const TaylorBuffer&) = delete;
  TaylorBuffer& operator=(const TaylorBuffer&) = delete;
  ~TaylorBuffer();
  double** resize(int rows, int columns);  // keeps nothing
  double** rows() const { return rows_; }

 private:
  double** rows_ = nullptr;
  int row_count_ = 0, column_count_ = 0;
};

// What the two tapes share: the tape of one scalar algorithm, its sizes and buffers, and
// the first-derivative sweep (fov_forward with 3 nv directions: configuration, velocity,
// and one per generalized velocity of the third input).
class AdolcTape {
 public:
  std::size_t tape_operations() const { return operations_; }

 protected:
  AdolcTape(std::shared_ptr<const ScalarTree> tree, short tag) : tree_(std::move(tree)), tag_(tag) {}
  // Checks the state and the third input (`what`: "RNEA" or "ABA"; `input`: "an acceleration",
  // "a force"), zeroes the point and loads gamma (at 0) and V (at 3) if the base floats and
  // q, q' from row `q_row`; returns gamma, the gravity in base coordinates.
  Vec3 load_state(const char* what, const TreeState& state, const Eigen::VectorXd& third, const char* input, int q_row);
  // The values and the three nv x nv Jacobians (by q along C exp(xi), by u, by the rows
  // `third_rows`) at the loaded point; empty for a tree that does not move.
  void first_derivatives(const Vec3& gamma, int q_row, const std::vector<int>& third_rows, Eigen::VectorXd& value,
                         Eigen::MatrixXd& by_q, Eigen::MatrixXd& by_u, Eigen::MatrixXd& by_third);

  std::shared_ptr<const ScalarTree> tree_;
  short tag_;
  int independents_ = 0, dependents_ = 0;
  std::size_t operations_ = 0;
  TaylorBuffer X_, Y_;
  std::vector<double> point_, value_;
};

// Inverse dynamics. Independents: gamma (floating), V, V' (floating), q, q', q''; dependents:
// the forces. One forward sweep of degree r gives tau^(0..r).
// First derivatives (bench-derivatives): the same tape in ADOL-C's vector forward mode,
// fov_forward with 3 nv directions, gives the matrices of InverseDynamicsDerivatives in
// LieMBS's coordinates (the base pose along C exp(xi), which turns gamma by gamma x omega).
class AdolcInverseDynamics : public AdolcTape {
 public:
  AdolcInverseDynamics(std::shared_ptr<const ScalarTree> tree, short tag);
  // Order-0 value by a zero-order sweep of the tape (checks the tape against the double code).
  void inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, Eigen::MatrixXd& forces);
  // tau, dtau/dq, dtau/du and M = dtau/du' by one fov_forward sweep.
  void derivatives(const TreeState& state, const Eigen::VectorXd& acceleration, InverseDynamicsDerivatives& out);

 private:
  Eigen::MatrixXd joints_, omega_, gamma_;
};

// Forward dynamics. Independents: gamma (floating), V (floating), q, q', tau; dependents: u'.
// The inputs' coefficients of degree d need the outputs' of degree d - 1 (q' = u'...), so
// order r takes r + 1 sweeps of degree 0, 1, ..., r (the Taylor ODE iteration of ADOL-C's
// forode, with the forces as a given input series): O(r^3) against H-GABI's O(r^2).
class AdolcForwardDynamics : public AdolcTape {
 public:
  AdolcForwardDynamics(std::shared_ptr<const ScalarTree> tree, short tag);
  void forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, Eigen::MatrixXd& rates);
  // u', du'/dq, du'/du and M^-1 = du'/dtau by one fov_forward sweep (3 nv directions).
  void derivatives(const TreeState& state, const Eigen::VectorXd& force, ForwardDynamicsDerivatives& out);
};

}  // namespace liembs::ad_baseline
