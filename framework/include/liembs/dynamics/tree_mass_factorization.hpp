#pragma once
// The mass matrix of a tree factored in tree order, M = L^T D L, and the solves with it
// (Featherstone, "Efficient factorization of the joint-space inertia matrix for branched
// kinematic trees", IJRR 24(6), 2005: the LTDL algorithm). L is unit lower triangular with
// L_kj nonzero only where j is an ancestor of k: M's own sparsity, so there is no fill-in
// and the factorization costs O(n d^2), each solve O(n d) (d the depth) instead of the
// dense Cholesky's n^3 / 3 and n^2.
//
// The generalized velocities are the nodes of a tree: a floating base's six come first, as a
// chain (each the parent of the next), and parent the tree's root nodes. Used by the
// forward-dynamics derivatives (derivative_algorithms.hpp, 000 section 6.1):
// du'/dx = -M^-1 dtau/dx and M^-1 itself, solved together as right-hand sides that have
// the tree's sparsity.
#include <liembs/dynamics/kinematic_tree.hpp>

#include <vector>

namespace liembs {

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class TreeMassFactorization {
 public:
  explicit TreeMassFactorization(const KinematicTree& tree);

  int size() const { return static_cast<int>(diagonal_.size()); }

  // M = L^T D L of a symmetric M with the tree's sparsity (only the entries of related
  // velocities are read). Throws SimulationError if M is not positive definite.
  void factorize(const Eigen::MatrixXd& mass);

  // x <- M^-1 x.
  void solve_in_place(Eigen::VectorXd& x) const;

  // X <- M^-1 X for X (row-major) made of column blocks of size() columns, each block with
  // the tree's sparsity: entry (i, j) nonzero only if i and j are related (equal, or one an
  // ancestor of the other). The identity, dtau/dq and dtau/du have it; the first
  // (leaves-to-root) sweep keeps it, so it only touches the columns up to a node's last
  // descendant, and only the second is dense.
  void solve_tree_sparse_in_place(RowMajorMatrix& X) const;

 private:
  // Ancestors of velocity k, nearest first: ancestors_[begin_[k] .. begin_[k + 1]), and
  // L_kj in the same layout in lower_. Velocity k's descendants all lie in (k, last_[k]].
  std::vector<int> ancestors_, last_;
  std::vector<std::size_t> begin_;
  std::vector<double> lower_, diagonal_;
};

}  // namespace liembs
