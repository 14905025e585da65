// M = L^T D L in tree order (Featherstone 2005, LTDL) and the solves with it; see
// tree_mass_factorization.hpp.
#include <liembs/dynamics/tree_mass_factorization.hpp>
#include <liembs/error.hpp>

#include <algorithm>

namespace liembs {

TreeMassFactorization::TreeMassFactorization(const KinematicTree& tree) {
  const int offset = tree.floating_base ? 6 : 0;
  const int nv = tree.velocity_dimension();
  // The parent of every generalized velocity: the base's six as a chain, then the nodes.
  std::vector<int> parent(static_cast<std::size_t>(nv));
  for (int k = 0; k < offset; ++k) parent[static_cast<std::size_t>(k)] = k - 1;
  for (int i = 0; i < tree.dof(); ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    parent[static_cast<std::size_t>(offset + i)] = p >= 0 ? offset + p : offset - 1;
  }
  last_.resize(static_cast<std::size_t>(nv));
  for (int k = 0; k < nv; ++k) last_[static_cast<std::size_t>(k)] = k;
  for (int k = nv - 1; k >= 0; --k) {  // parents come first: the last descendant, leaves first
    const int p = parent[static_cast<std::size_t>(k)];
    if (p >= 0) last_[static_cast<std::size_t>(p)] = std::max(last_[static_cast<std::size_t>(p)], last_[static_cast<std::size_t>(k)]);
  }
  for (int k = 0; k < nv; ++k) {
    begin_.push_back(ancestors_.size());
    for (int j = parent[static_cast<std::size_t>(k)]; j >= 0; j = parent[static_cast<std::size_t>(j)]) ancestors_.push_back(j);
  }
  begin_.push_back(ancestors_.size());
  lower_.resize(ancestors_.size());
  diagonal_.resize(static_cast<std::size_t>(nv));
}

void TreeMassFactorization::factorize(const Eigen::MatrixXd& mass) {
  const int nv = size();
  for (int k = 0; k < nv; ++k) {
    diagonal_[static_cast<std::size_t>(k)] = mass(k, k);
    for (std::size_t e = begin_[static_cast<std::size_t>(k)]; e < begin_[static_cast<std::size_t>(k) + 1]; ++e)
      lower_[e] = mass(k, ancestors_[e]);
  }
  // Leaves first: row k of L from M's row k as updated by k's descendants; its ancestors'
  // rows and diagonal lose the part row k accounts for (Featherstone's Table 2). The
  // ancestors of ancestor i are the tail of k's list after i, so both rows are contiguous.
  for (int k = nv - 1; k >= 0; --k) {
    const auto kk = static_cast<std::size_t>(k);
    const double d = diagonal_[kk];
    if (!(d > 0.0)) throw SimulationError("singular configuration: the mass matrix is not positive definite");
    double* const row = lower_.data() + begin_[kk];
    const std::size_t depth = begin_[kk + 1] - begin_[kk];
    for (std::size_t p = 0; p < depth; ++p) {
      const auto i = static_cast<std::size_t>(ancestors_[begin_[kk] + p]);
      const double a = row[p] / d;
      diagonal_[i] -= a * row[p];
      double* const ancestor_row = lower_.data() + begin_[i];
      for (std::size_t t = p + 1; t < depth; ++t) ancestor_row[t - p - 1] -= a * row[t];
      row[p] = a;
    }
  }
}

void TreeMassFactorization::solve_in_place(Eigen::VectorXd& x) const {
  const int nv = size();
  for (int k = nv - 1; k >= 0; --k)  // x <- L^-T x
    for (std::size_t e = begin_[static_cast<std::size_t>(k)]; e < begin_[static_cast<std::size_t>(k) + 1]; ++e)
      x(ancestors_[e]) -= lower_[e] * x(k);
  for (int k = 0; k < nv; ++k) {  // x <- L^-1 D^-1 x
    double value = x(k) / diagonal_[static_cast<std::size_t>(k)];
    for (std::size_t e = begin_[static_cast<std::size_t>(k)]; e < begin_[static_cast<std::size_t>(k) + 1]; ++e)
      value -= lower_[e] * x(ancestors_[e]);
    x(k) = value;
  }
}

void TreeMassFactorization::solve_tree_sparse_in_place(RowMajorMatrix& X) const {
  const int nv = size();
  const Eigen::Index width = X.cols(), blocks = nv > 0 ? width / nv : 0;
  using Row = Eigen::Map<Eigen::RowVectorXd>;
  // X <- L^-T X, leaves first. Row k, once final, is nonzero only in the columns of k's
  // ancestors and descendants (the sparsity is kept: a descendant's related columns are
  // k's), all at most last_[k]: its ancestors' rows get only that part.
  for (int k = nv - 1; k >= 0; --k) {
    const auto kk = static_cast<std::size_t>(k);
    const Eigen::Index columns = last_[kk] + 1;
    for (std::size_t e = begin_[kk]; e < begin_[kk + 1]; ++e)
      for (Eigen::Index b = 0; b < blocks; ++b)
        Row(X.row(ancestors_[e]).data() + b * nv, columns) -= lower_[e] * Row(X.row(k).data() + b * nv, columns);
  }
  // X <- L^-1 D^-1 X, root first, whole rows.
  for (int k = 0; k < nv; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    X.row(k) /= diagonal_[kk];
    for (std::size_t e = begin_[kk]; e < begin_[kk + 1]; ++e) X.row(k) -= lower_[e] * X.row(ancestors_[e]);
  }
}

}  // namespace liembs
