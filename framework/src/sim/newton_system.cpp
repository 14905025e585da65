#include <liembs/sim/newton_system.hpp>

#include <cmath>
#include <utility>

namespace liembs {

// Column-major raw loops: at these sizes the per-expression overhead of dynamic Eigen blocks
// costs more than the arithmetic.
void SmallLU::compute(const Eigen::Ref<const Eigen::MatrixXd>& matrix) {
  lu_ = matrix;
  const Eigen::Index n = lu_.rows();
  pivots_.resize(static_cast<std::size_t>(n));
  double* a = lu_.data();
  for (Eigen::Index k = 0; k < n; ++k) {
    double* column_k = a + k * n;
    Eigen::Index pivot = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(column_k[i]) > std::abs(column_k[pivot])) pivot = i;
    pivots_[static_cast<std::size_t>(k)] = pivot;
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

void SmallLU::solve(double* x) const {
  const Eigen::Index n = lu_.rows();
  const double* a = lu_.data();
  for (Eigen::Index k = 0; k < n; ++k) std::swap(x[k], x[pivots_[static_cast<std::size_t>(k)]]);
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

void SmallLU::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const { solve(x.data()); }

void SmallLU::solve_columns_in_place(Eigen::Ref<Eigen::MatrixXd> x) const {
  for (Eigen::Index c = 0; c < x.cols(); ++c) solve(x.col(c).data());
}

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

void NewtonSystem::factorize(const Eigen::MatrixXd& A, const Eigen::MatrixXd& J, Eigen::Index block_size,
                             Eigen::Index bodies, bool augment) {
  n_ = A.rows();
  m_ = J.rows();
  blocks_ = m_ > 0 && is_block_diagonal(A, block_size, bodies);
  if (!blocks_) {
    dense_.setZero(n_ + m_, n_ + m_);
    dense_.topLeftCorner(n_, n_) = A;
    if (m_ > 0) {
      dense_.block(0, n_, n_, m_) = J.transpose();
      dense_.block(n_, 0, m_, n_) = J;
    }
    dense_lu_.compute(dense_);
    return;
  }
  block_size_ = block_size;
  bodies_.resize(static_cast<std::size_t>(bodies));
  schur_.setZero(m_, m_);
  for (Eigen::Index b = 0; b < bodies; ++b) {
    Body& body = bodies_[static_cast<std::size_t>(b)];
    const Eigen::Index first = b * block_size;
    body.rows.clear();
    body.local_rows.clear();
    for (Eigen::Index r = 0; r < m_; ++r) {
      if (J.row(r).segment(first, block_size).isZero(0.0)) continue;
      body.rows.push_back(r);
      if (augment && J.row(r).head(first).isZero(0.0) && J.row(r).tail(n_ - first - block_size).isZero(0.0))
        body.local_rows.push_back(r);
    }
    const auto k = static_cast<Eigen::Index>(body.rows.size());
    body.jacobian_t.resize(block_size, k);
    for (Eigen::Index i = 0; i < k; ++i)
      body.jacobian_t.col(i) = J.row(body.rows[static_cast<std::size_t>(i)]).segment(first, block_size).transpose();
    block_ = A.block(first, first, block_size, block_size);
    auto& block = block_;
    body.weight = 0.0;
    if (!body.local_rows.empty()) {
      double row_scale = 0.0;
      for (const Eigen::Index r : body.local_rows) row_scale = std::max(row_scale, J.row(r).squaredNorm());
      body.weight = std::max(block.cwiseAbs().maxCoeff(), 1e-300) / std::max(row_scale, 1e-300);
      for (const Eigen::Index r : body.local_rows) {
        const auto row = J.row(r).segment(first, block_size);
        block.noalias() += body.weight * row.transpose() * row;
      }
    }
    body.lu.compute(block);
    body.inverse_jacobian_t = body.jacobian_t;
    body.lu.solve_columns_in_place(body.inverse_jacobian_t);
    for (Eigen::Index j = 0; j < k; ++j) {
      const auto column = body.inverse_jacobian_t.col(j);
      for (Eigen::Index i = 0; i < k; ++i)
        schur_(body.rows[static_cast<std::size_t>(i)], body.rows[static_cast<std::size_t>(j)]) +=
            body.jacobian_t.col(i).dot(column);
    }
  }
  schur_lu_.compute(schur_);
}

void NewtonSystem::solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& solution) const {
  if (!blocks_) {
    solution = dense_lu_.solve(rhs);
    return;
  }
  solution.resize(n_ + m_);
  // y = A^-1 (b + w J_L^T c_L) per body; then S lambda = J y - c; x = y - A^-1 J^T lambda.
  y_ = rhs.head(n_);
  lambda_rhs_ = -rhs.tail(m_);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Body& body = bodies_[b];
    const auto first = static_cast<Eigen::Index>(b) * block_size_;
    auto y = y_.segment(first, block_size_);
    for (const Eigen::Index r : body.local_rows)
      for (std::size_t i = 0; i < body.rows.size(); ++i)
        if (body.rows[i] == r) y += (body.weight * rhs(n_ + r)) * body.jacobian_t.col(static_cast<Eigen::Index>(i));
    body.lu.solve_in_place(y);
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      lambda_rhs_(body.rows[i]) += body.jacobian_t.col(static_cast<Eigen::Index>(i)).dot(y);
  }
  schur_lu_.solve_in_place(lambda_rhs_);
  auto lambda = solution.tail(m_);
  lambda = lambda_rhs_;
  auto x = solution.head(n_);
  x = y_;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Body& body = bodies_[b];
    const auto first = static_cast<Eigen::Index>(b) * block_size_;
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      x.segment(first, block_size_) -= body.inverse_jacobian_t.col(static_cast<Eigen::Index>(i)) * lambda(body.rows[i]);
  }
}

}  // namespace liembs
