#include <liembs/error.hpp>
#include <liembs/sim/newton_system.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace liembs {

namespace {

// Column-major raw loops: at these sizes the per-expression overhead of dynamic Eigen blocks
// costs more than the arithmetic.
void factor_in_place(double* a, Eigen::Index* pivots, Eigen::Index n) {
  for (Eigen::Index k = 0; k < n; ++k) {
    double* column_k = a + k * n;
    Eigen::Index pivot = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(column_k[i]) > std::abs(column_k[pivot])) pivot = i;
    pivots[k] = pivot;
    if (pivot != k)
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[j * n + k], a[j * n + pivot]);
    const double diagonal = column_k[k];
    if (diagonal == 0.0) continue;  // singular: the solve gives non-finite numbers
    const double inverse = 1.0 / diagonal;
    for (Eigen::Index i = k + 1; i < n; ++i) column_k[i] *= inverse;
    for (Eigen::Index j = k + 1; j < n; ++j) {
      double* column_j = a + j * n;
      const double factor = column_j[k];
      if (factor == 0.0) continue;
      for (Eigen::Index i = k + 1; i < n; ++i) column_j[i] -= factor * column_k[i];
    }
  }
}

void solve_factored(const double* a, const Eigen::Index* pivots, double* x, Eigen::Index n) {
  for (Eigen::Index k = 0; k < n; ++k) std::swap(x[k], x[pivots[k]]);
  for (Eigen::Index j = 0; j < n; ++j) {  // L y = P x (unit diagonal), column by column
    const double xj = x[j];
    if (xj == 0.0) continue;
    const double* column = a + j * n;
    for (Eigen::Index i = j + 1; i < n; ++i) x[i] -= xj * column[i];
  }
  for (Eigen::Index j = n - 1; j >= 0; --j) {  // U x = y
    const double* column = a + j * n;
    const double xj = x[j] /= column[j];
    for (Eigen::Index i = 0; i < j; ++i) x[i] -= xj * column[i];
  }
}

}  // namespace

void SmallLU::compute(const Eigen::Ref<const Eigen::MatrixXd>& matrix) {
  lu_ = matrix;
  const Eigen::Index n = lu_.rows();
  pivots_.resize(static_cast<std::size_t>(n));
  factor_in_place(lu_.data(), pivots_.data(), n);
}

void SmallLU::solve(double* x) const {
  solve_factored(lu_.data(), pivots_.data(), x, lu_.rows());
}

void SmallLU::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const { solve(x.data()); }

bool NewtonSystem::is_block_diagonal(const Eigen::MatrixXd& A, Eigen::Index block_size, Eigen::Index bodies) {
  if (block_size <= 0 || bodies * block_size != A.rows()) return false;
  for (Eigen::Index c = 0; c < A.cols(); ++c) {
    const Eigen::Index first = (c / block_size) * block_size;
    for (Eigen::Index r = 0; r < first; ++r)
      if (A(r, c) != 0.0) return false;
    for (Eigen::Index r = first + block_size; r < A.rows(); ++r)
      if (A(r, c) != 0.0) return false;
  }
  return true;
}

namespace {

// x . y and y += a x over one body's block of coordinates (N > 0: its size at compile time).
template <int N>
double block_dot(const double* x, const double* y, Eigen::Index n) {
  if constexpr (N > 0) n = N;
  double sum = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}
// In-place inverse of a small column-major n x n matrix by Gauss-Jordan elimination with
// partial pivoting, N = n fixed at compile time. Returns the smallest pivot relative to the
// largest entry (0 for a singular matrix, whose inverse is then not finite).
template <int N>
double invert_in_place(double* a) {
  constexpr Eigen::Index n = N;
  Eigen::Index pivots[N];
  double column_k[N];
  double scale = 0.0, smallest_pivot = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < n * n; ++i) scale = std::max(scale, std::abs(a[i]));
  for (Eigen::Index k = 0; k < n; ++k) {
    Eigen::Index pivot = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(a[k * n + i]) > std::abs(a[k * n + pivot])) pivot = i;
    pivots[k] = pivot;
    if (pivot != k)
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[j * n + k], a[j * n + pivot]);
    for (Eigen::Index i = 0; i < n; ++i) column_k[i] = a[k * n + i], a[k * n + i] = 0.0;
    a[k * n + k] = 1.0;
    smallest_pivot = std::min(smallest_pivot, std::abs(column_k[k]));
    const double inverse = 1.0 / column_k[k];
    for (Eigen::Index j = 0; j < n; ++j) {
      double* column = a + j * n;
      const double pivot_row = column[k] *= inverse;
      for (Eigen::Index i = 0; i < n; ++i)
        if (i != k) column[i] -= column_k[i] * pivot_row;
    }
  }
  for (Eigen::Index k = n - 1; k >= 0; --k)  // undo the row swaps on the columns of the inverse
    if (pivots[k] != k)
      for (Eigen::Index i = 0; i < n; ++i) std::swap(a[k * n + i], a[pivots[k] * n + i]);
  return scale > 0.0 ? smallest_pivot / scale : 0.0;
}

// Below this pivot ratio a body block counts as singular (a zero principal moment of inertia
// at rest), and the whole matrix is factorized instead.
constexpr double singular_pivot = 1e-12;

template <int N>
void block_axpy(double a, const double* x, double* y, Eigen::Index n) {
  if constexpr (N > 0) n = N;
  for (Eigen::Index i = 0; i < n; ++i) y[i] += a * x[i];
}

// f(std::integral_constant<int, N>) with N the body block size where it has a fixed-size path
// (6: SE3, SO3xR3, Euler angles; 7: Euler parameters), N = 0 for any other size.
template <class F>
void with_block_size(Eigen::Index size, F&& f) {
  if (size == 6)
    f(std::integral_constant<int, 6>{});
  else if (size == 7)
    f(std::integral_constant<int, 7>{});
  else
    f(std::integral_constant<int, 0>{});
}

}  // namespace

void NewtonSystem::factorize(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J, Eigen::Index block_size,
                             Eigen::Index bodies, bool augment) {
  n_ = A.rows();
  m_ = J.rows();
  blocks_ = m_ > 0 && is_block_diagonal(A, block_size, bodies);
  if (!blocks_) {
    factorize_dense(A, J);
    return;
  }
  block_size_ = block_size;
  bodies_.resize(static_cast<std::size_t>(bodies));
  find_body_rows(J, augment);
  schur_.setZero(m_, m_);
  singular_block_ = false;
  with_block_size(block_size, [&](auto N) { factorize_blocks<decltype(N)::value>(A, J); });
  if (singular_block_) {
    // A body whose mass matrix is singular (a rod-like inertia, paper 004's four link): the
    // constraints may still make the whole matrix regular; check that it is.
    blocks_ = false;
    factorize_dense(A, J);
    const Eigen::VectorXd pivots = dense_lu_.matrixLU().diagonal().cwiseAbs();
    if (!(pivots.minCoeff() > singular_pivot * pivots.maxCoeff()))
      throw SimulationError("the Newton matrix [[M + beta h C, J^T], [J, 0]] is singular: a body's mass matrix is singular "
                            "(an inertia with a zero principal moment) about a direction the constraints do not hold "
                            "(smallest pivot " + std::to_string(pivots.minCoeff() / pivots.maxCoeff()) +
                            " of the largest)");
    return;
  }
  schur_lu_.compute(schur_);
}

void NewtonSystem::factorize_dense(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J) {
  dense_.setZero(n_ + m_, n_ + m_);
  dense_.topLeftCorner(n_, n_) = A;
  if (m_ > 0) {
    dense_.block(0, n_, n_, m_) = J.transpose();
    dense_.block(n_, 0, m_, n_) = J;
  }
  dense_lu_.compute(dense_);
}

// Per body, the constraint rows with an entry in its columns, and (augment) those of them with
// no entry outside, in one pass over J's columns.
void NewtonSystem::find_body_rows(const Eigen::MatrixXd& J, bool augment) {
  row_bodies_.assign(static_cast<std::size_t>(m_), 0);
  row_touched_.resize(static_cast<std::size_t>(m_));
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    Body& body = bodies_[b];
    std::fill(row_touched_.begin(), row_touched_.end(), 0);
    for (Eigen::Index c = static_cast<Eigen::Index>(b) * block_size_; c < static_cast<Eigen::Index>(b + 1) * block_size_; ++c) {
      const double* column = J.data() + c * m_;
      for (Eigen::Index r = 0; r < m_; ++r) row_touched_[static_cast<std::size_t>(r)] |= column[r] != 0.0;
    }
    body.rows.clear();
    for (Eigen::Index r = 0; r < m_; ++r)
      if (row_touched_[static_cast<std::size_t>(r)]) {
        body.rows.push_back(r);
        ++row_bodies_[static_cast<std::size_t>(r)];
      }
  }
  for (Body& body : bodies_) {
    body.local_rows.clear();
    body.local_positions.clear();
    if (!augment) continue;
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      if (row_bodies_[static_cast<std::size_t>(body.rows[i])] == 1) {
        body.local_rows.push_back(body.rows[i]);
        body.local_positions.push_back(static_cast<Eigen::Index>(i));
      }
  }
}

template <int N>
void NewtonSystem::factorize_blocks(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J) {
  const Eigen::Index size = block_size_;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    Body& body = bodies_[b];
    const Eigen::Index first = static_cast<Eigen::Index>(b) * size;
    const auto k = static_cast<Eigen::Index>(body.rows.size());
    body.jacobian_t.resize(size, k);
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index l = 0; l < size; ++l) body.jacobian_t(l, i) = J(body.rows[static_cast<std::size_t>(i)], first + l);
    block_ = A.block(first, first, size, size);
    body.weight = 0.0;
    if (!body.local_rows.empty()) {
      double row_scale = 0.0;
      for (const Eigen::Index r : body.local_rows) row_scale = std::max(row_scale, J.row(r).squaredNorm());
      body.weight = std::max(block_.cwiseAbs().maxCoeff(), 1e-300) / std::max(row_scale, 1e-300);
      for (const Eigen::Index r : body.local_rows) {
        const auto row = J.row(r).segment(first, size);
        block_.noalias() += body.weight * row.transpose() * row;
      }
    }
    // The block's inverse: A_b^-1 J_b^T and, in solve(), A_b^-1 b are then small products.
    body.inverse = block_;
    if constexpr (N > 0) {
      if (!(invert_in_place<N>(body.inverse.data()) > singular_pivot)) singular_block_ = true;
      body.inverse_jacobian_t.resize(size, k);
      body.inverse_jacobian_t.noalias() =
          Eigen::Map<const Eigen::Matrix<double, N, N>>(body.inverse.data()).lazyProduct(body.jacobian_t);
    } else {
      const Eigen::PartialPivLU<Eigen::MatrixXd> lu(block_);
      const Eigen::VectorXd pivots = lu.matrixLU().diagonal().cwiseAbs();
      if (!(pivots.minCoeff() > singular_pivot * block_.cwiseAbs().maxCoeff())) singular_block_ = true;
      body.inverse = lu.inverse();
      body.inverse_jacobian_t.noalias() = body.inverse * body.jacobian_t;
    }
    // S += J_b A_b^-1 J_b^T on the body's rows.
    for (Eigen::Index j = 0; j < k; ++j) {
      const double* column = body.inverse_jacobian_t.col(j).data();
      const Eigen::Index schur_column = body.rows[static_cast<std::size_t>(j)];
      for (Eigen::Index i = 0; i < k; ++i)
        schur_(body.rows[static_cast<std::size_t>(i)], schur_column) +=
            block_dot<N>(body.jacobian_t.col(i).data(), column, size);
    }
  }
}

void NewtonSystem::solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& solution) const {
  if (!blocks_) {
    solution = dense_lu_.solve(rhs);
    return;
  }
  with_block_size(block_size_, [&](auto N) { solve_blocks<decltype(N)::value>(rhs, solution); });
}

template <int N>
void NewtonSystem::solve_blocks(const Eigen::VectorXd& rhs, Eigen::VectorXd& solution) const {
  const Eigen::Index size = block_size_;
  solution.resize(n_ + m_);
  // y = A^-1 (b + w J_L^T c_L) per body; then S lambda = J y - c; x = y - A^-1 J^T lambda.
  double* x = solution.data();
  double* lambda = x + n_;
  for (Eigen::Index i = 0; i < n_; ++i) x[i] = rhs(i);
  for (Eigen::Index r = 0; r < m_; ++r) lambda[r] = -rhs(n_ + r);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Body& body = bodies_[b];
    double* y = x + static_cast<Eigen::Index>(b) * size;
    for (std::size_t l = 0; l < body.local_rows.size(); ++l)
      block_axpy<N>(body.weight * rhs(n_ + body.local_rows[l]), body.jacobian_t.col(body.local_positions[l]).data(), y,
                    size);
    if constexpr (N > 0) {
      const Eigen::Matrix<double, N, 1> b_rhs = Eigen::Map<const Eigen::Matrix<double, N, 1>>(y);
      Eigen::Map<Eigen::Matrix<double, N, 1>>(y).noalias() = Eigen::Map<const Eigen::Matrix<double, N, N>>(body.inverse.data()) * b_rhs;
    } else {
      block_rhs_ = Eigen::Map<const Eigen::VectorXd>(y, size);
      Eigen::Map<Eigen::VectorXd>(y, size).noalias() = body.inverse * block_rhs_;
    }
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      lambda[body.rows[i]] += block_dot<N>(body.jacobian_t.col(static_cast<Eigen::Index>(i)).data(), y, size);
  }
  schur_lu_.solve_in_place(solution.tail(m_));
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Body& body = bodies_[b];
    double* y = x + static_cast<Eigen::Index>(b) * size;
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      block_axpy<N>(-lambda[body.rows[i]], body.inverse_jacobian_t.col(static_cast<Eigen::Index>(i)).data(), y, size);
  }
}

}  // namespace liembs
