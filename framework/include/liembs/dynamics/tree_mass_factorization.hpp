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

  // The column blocks of inverse_and_solve_in_place: size() columns padded with zero ones
  // to a multiple of 8, so that its row operations run on whole groups of registers.
  static Eigen::Index block_width(int size) { return (size + 7) / 8 * 8; }

  // X = [M^-1 | M^-1 B_1 | ... ] from X = [(anything) | B_1 | ...] (row-major, size() rows,
  // blocks of block_width(size()) columns whose columns past size() are zero, and stay
  // so): the first block is overwritten with M^-1's upper triangle (read it through
  // selfadjointView<Eigen::Upper>(); the entries below the diagonal are unspecified), the
  // others are solved in place. Each B
  // must have the tree's sparsity: entry (i, j) nonzero only if i and j are related (equal,
  // or one an ancestor of the other); dtau/dq and dtau/du have it. The first
  // (leaves-to-root) sweep keeps that sparsity and touches only the columns up to a
  // velocity's last descendant (of M^-1's block, only the descendants' own), the second is
  // dense but computes only M^-1's upper triangle. (Not const: per-row scratch.)
  void inverse_and_solve_in_place(RowMajorMatrix& X);

 private:
  // Ancestors of velocity k, nearest first: ancestors_[begin_[k] .. begin_[k + 1]), and
  // L_kj in the same layout in lower_. Velocity k's descendants all lie in (k, last_[k]].
  std::vector<int> ancestors_, last_;
  std::vector<std::size_t> begin_;
  std::vector<double> lower_, diagonal_, inverse_diagonal_;
  // The descendants of velocity k and the index of L_dk in lower_, per k in the same layout.
  std::vector<int> descendants_;
  std::vector<std::size_t> descendants_begin_, descendant_entries_;
  std::vector<Eigen::Index> descendant_limits_;  // last_ + 1 of each descendant: its row is zero from there on
  // Scratch of one row's sources in the solves.
  std::vector<const double*> sources_;
  std::vector<double> coefficients_;
};

}  // namespace liembs
