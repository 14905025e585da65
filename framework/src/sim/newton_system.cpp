#include <liembs/sim/newton_system.hpp>

namespace liembs {

bool NewtonSystem::is_block_diagonal(const Eigen::MatrixXd& A, Eigen::Index block_size, Eigen::Index bodies) {
  if (block_size <= 0 || block_size > 8 || bodies * block_size != A.rows()) return false;
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
    body.jacobian.resize(k, block_size);
    for (Eigen::Index i = 0; i < k; ++i) body.jacobian.row(i) = J.row(body.rows[static_cast<std::size_t>(i)]).segment(first, block_size);
    Block block = A.block(first, first, block_size, block_size);
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
    body.inverse_jacobian_t = body.lu.solve(body.jacobian.transpose());
    const Eigen::MatrixXd contribution = body.jacobian * body.inverse_jacobian_t;
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index j = 0; j < k; ++j)
        schur_(body.rows[static_cast<std::size_t>(i)], body.rows[static_cast<std::size_t>(j)]) += contribution(i, j);
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
        if (body.rows[i] == r) y += (body.weight * rhs(n_ + r)) * body.jacobian.row(static_cast<Eigen::Index>(i)).transpose();
    y = body.lu.solve(Eigen::VectorXd(y));
    for (std::size_t i = 0; i < body.rows.size(); ++i)
      lambda_rhs_(body.rows[i]) += body.jacobian.row(static_cast<Eigen::Index>(i)).dot(y);
  }
  auto lambda = solution.tail(m_);
  lambda = schur_lu_.solve(lambda_rhs_);
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
