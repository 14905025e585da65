#pragma once
// The linear system of an index-3 Newton step, [[A, J^T], [J, 0]] (x, y) = (b, c), factorized
// once and solved for several right-hand sides. When A is block diagonal with one block per
// free body (absolute coordinates: M + beta h C), it is solved through the Schur complement
//   S = J A^-1 J^T = sum_b J_b A_b^-1 J_b^T
// over each body's nonzero constraint rows (an m x m LU plus the explicit inverses of the small
// body blocks instead of one (n + m)^2 LU); otherwise (trees, or A with the stiffness K coupling bodies) by a dense LU of
// the whole matrix. A singular A_b (Euler parameters: M is singular along p) is made regular
// with the body's own constraint rows J_L (those with no entry outside its columns, among them
// the normalization row): (A + w J_L^T J_L) x + J^T y = b + w J_L^T c_L has the same solution.
// A block that stays singular (a body with a zero principal moment of inertia, whose rotation
// about that axis only the constraints with other bodies hold: paper 004's four link) makes
// factorize() use the dense LU for that matrix and check that the whole matrix is regular; if
// it is not, factorize() throws a SimulationError.
#include <Eigen/Dense>

#include <vector>

namespace liembs {

// LU factorization with partial pivoting for the Schur complement of NewtonSystem: a plain
// right-looking loop, without the blocking and dispatch overhead that dominates Eigen's
// PartialPivLU below about 30 x 30.
class SmallLU {
 public:
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& matrix);
  // x <- A^-1 x.
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const;

 private:
  void solve(double* x) const;  // x of the matrix's size, contiguous
  Eigen::MatrixXd lu_;
  std::vector<Eigen::Index> pivots_;
};

class NewtonSystem {
 public:
  // block_size: velocity coordinates per free body (0: no block structure), bodies: number of
  // free bodies whose coordinates come first; augment: add each body's own constraint rows to
  // its block (for parameterizations with internal constraints). A is n x n, J is m x n.
  void factorize(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J, Eigen::Index block_size, Eigen::Index bodies,
                 bool augment);
  // rhs = (b, c) of size n + m; solution = (x, y).
  void solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& solution) const;
  bool uses_blocks() const { return blocks_; }

 private:
  struct Body {
    Eigen::MatrixXd inverse;               // A_b^-1 (augmented)
    std::vector<Eigen::Index> rows;        // constraint rows with an entry in the body's columns
    std::vector<Eigen::Index> local_rows;  // of those, the rows added to the block (augment)
    std::vector<Eigen::Index> local_positions;  // their positions in rows
    double weight = 0.0;
    Eigen::MatrixXd jacobian_t;            // J_b^T: block_size x rows
    Eigen::MatrixXd inverse_jacobian_t;    // A_b^-1 J_b^T: block_size x rows
  };
  static bool is_block_diagonal(const Eigen::MatrixXd& A, Eigen::Index block_size, Eigen::Index bodies);
  void factorize_dense(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J);
  void find_body_rows(const Eigen::MatrixXd& J, bool augment);
  template <int N>
  void factorize_blocks(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J);
  template <int N>
  void solve_blocks(const Eigen::VectorXd& rhs, Eigen::VectorXd& solution) const;

  bool blocks_ = false;
  bool singular_block_ = false;  // set by factorize_blocks
  Eigen::Index n_ = 0, m_ = 0, block_size_ = 0;
  std::vector<Body> bodies_;
  Eigen::MatrixXd schur_, dense_, block_;
  SmallLU schur_lu_;
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu_;
  mutable Eigen::VectorXd block_rhs_;
  std::vector<int> row_bodies_;           // per constraint row, the number of bodies it touches
  std::vector<char> row_touched_;
};

}  // namespace liembs
