// M = L^T D L in tree order (Featherstone 2005, LTDL) and the solves with it; see
// tree_mass_factorization.hpp.
#include <liembs/dynamics/tree_mass_factorization.hpp>
#include <liembs/error.hpp>

#include <algorithm>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace liembs {

namespace {

// y[c] <- scale y[c] - sum_t coefficients[t] sources[t][c] for c in [begin, end), with
// `limits` a source taken only where c < offset + limits[t] (it is zero from there on). A chunk of
// columns at a time in registers, each y read and written once: the rows of a solve are
// short and many, and updating y once per source would bound the loop by its stores; 16
// columns give 8 independent SSE accumulators, enough to hide the add latency.
template <int Width, bool Limited>
Eigen::Index gather_chunks(double* y, Eigen::Index c, Eigen::Index end, double scale, const double* const* sources,
                           const double* coefficients, const Eigen::Index* limits, Eigen::Index offset, std::size_t count) {
  using Chunk = Eigen::Array<double, Width, 1>;
  for (; c + Width <= end; c += Width) {
    Chunk sum = scale * Eigen::Map<const Chunk>(y + c);
    for (std::size_t t = 0; t < count; ++t)
      if (!Limited || c < offset + limits[t]) sum -= coefficients[t] * Eigen::Map<const Chunk>(sources[t] + c);
    Eigen::Map<Chunk>(y + c) = sum;
  }
  return c;
}

template <bool Limited>
void gather_rows_baseline(double* y, Eigen::Index begin, Eigen::Index end, double scale, const double* const* sources,
                          const double* coefficients, const Eigen::Index* limits, Eigen::Index offset, std::size_t count) {
  Eigen::Index c = gather_chunks<16, Limited>(y, begin, end, scale, sources, coefficients, limits, offset, count);
  c = gather_chunks<4, Limited>(y, c, end, scale, sources, coefficients, limits, offset, count);
  for (; c < end; ++c) {
    double value = scale * y[c];
    for (std::size_t t = 0; t < count; ++t)
      if (!Limited || c < offset + limits[t]) value -= coefficients[t] * sources[t][c];
    y[c] = value;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LIEMBS_GATHER_DISPATCH 1
// a <- a - k x over 16 columns (four registers).
__attribute__((target("avx2,fma"), always_inline)) inline void subtract_scaled16(double k, const double* x, __m256d& a0,
                                                                                  __m256d& a1, __m256d& a2, __m256d& a3) {
  const __m256d factor = _mm256_set1_pd(k);
  a0 = _mm256_fnmadd_pd(factor, _mm256_loadu_pd(x), a0);
  a1 = _mm256_fnmadd_pd(factor, _mm256_loadu_pd(x + 4), a1);
  a2 = _mm256_fnmadd_pd(factor, _mm256_loadu_pd(x + 8), a2);
  a3 = _mm256_fnmadd_pd(factor, _mm256_loadu_pd(x + 12), a3);
}

// The same with AVX2 and FMA, chosen at run time when the processor has them (the build
// stays baseline x86-64): the solves are dense row operations, the one part of the
// derivatives that wider registers speed up directly (docs/derivatives.md, "Benchmark").
// 16 columns are 4 registers; sources alternate between two sets of accumulators, so 8
// fused multiply-adds are in flight.
template <bool Limited>
__attribute__((target("avx2,fma"))) void gather_rows_avx2(double* y, Eigen::Index begin, Eigen::Index end, double scale,
                                                          const double* const* sources, const double* coefficients,
                                                          const Eigen::Index* limits, Eigen::Index offset, std::size_t count) {
  const __m256d factor = _mm256_set1_pd(scale);
  Eigen::Index c = begin;
  for (; c + 16 <= end; c += 16) {
    __m256d a0 = _mm256_mul_pd(factor, _mm256_loadu_pd(y + c)), a1 = _mm256_mul_pd(factor, _mm256_loadu_pd(y + c + 4));
    __m256d a2 = _mm256_mul_pd(factor, _mm256_loadu_pd(y + c + 8)), a3 = _mm256_mul_pd(factor, _mm256_loadu_pd(y + c + 12));
    __m256d b0 = _mm256_setzero_pd(), b1 = b0, b2 = b0, b3 = b0;
    std::size_t t = 0;
    for (; t + 2 <= count; t += 2) {
      if (!Limited || c < offset + limits[t]) subtract_scaled16(coefficients[t], sources[t] + c, a0, a1, a2, a3);
      if (!Limited || c < offset + limits[t + 1]) subtract_scaled16(coefficients[t + 1], sources[t + 1] + c, b0, b1, b2, b3);
    }
    if (t < count && (!Limited || c < offset + limits[t])) subtract_scaled16(coefficients[t], sources[t] + c, a0, a1, a2, a3);
    _mm256_storeu_pd(y + c, _mm256_add_pd(a0, b0));
    _mm256_storeu_pd(y + c + 4, _mm256_add_pd(a1, b1));
    _mm256_storeu_pd(y + c + 8, _mm256_add_pd(a2, b2));
    _mm256_storeu_pd(y + c + 12, _mm256_add_pd(a3, b3));
  }
  for (; c + 4 <= end; c += 4) {
    __m256d a = _mm256_mul_pd(factor, _mm256_loadu_pd(y + c));
    for (std::size_t t = 0; t < count; ++t)
      if (!Limited || c < offset + limits[t]) a = _mm256_fnmadd_pd(_mm256_set1_pd(coefficients[t]), _mm256_loadu_pd(sources[t] + c), a);
    _mm256_storeu_pd(y + c, a);
  }
  for (; c < end; ++c) {
    double value = scale * y[c];
    for (std::size_t t = 0; t < count; ++t)
      if (!Limited || c < offset + limits[t]) value -= coefficients[t] * sources[t][c];
    y[c] = value;
  }
}

bool processor_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

template <bool Limited>
void gather_rows(double* y, Eigen::Index begin, Eigen::Index end, double scale, const double* const* sources,
                 const double* coefficients, const Eigen::Index* limits, Eigen::Index offset, std::size_t count) {
#ifdef LIEMBS_GATHER_DISPATCH
  static const bool wide = processor_has_avx2_fma();
  if (wide) return gather_rows_avx2<Limited>(y, begin, end, scale, sources, coefficients, limits, offset, count);
#endif
  gather_rows_baseline<Limited>(y, begin, end, scale, sources, coefficients, limits, offset, count);
}

}  // namespace

TreeMassFactorization::TreeMassFactorization(const KinematicTree& tree) {
  const int offset = tree.floating_base ? 6 : 0;
  const int nv = tree.velocity_dimension();
  const auto size = static_cast<std::size_t>(nv);
  // The parent of every generalized velocity: the base's six as a chain, then the nodes.
  std::vector<int> parent(size);
  for (int k = 0; k < offset; ++k) parent[static_cast<std::size_t>(k)] = k - 1;
  for (int i = 0; i < tree.dof(); ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    parent[static_cast<std::size_t>(offset + i)] = p >= 0 ? offset + p : offset - 1;
  }
  last_.resize(size);
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
  // The same pairs seen from the ancestor: its descendants, with the index of L_dk.
  std::vector<std::vector<std::pair<int, std::size_t>>> below(size);
  for (int d = 0; d < nv; ++d)
    for (std::size_t e = begin_[static_cast<std::size_t>(d)]; e < begin_[static_cast<std::size_t>(d) + 1]; ++e)
      below[static_cast<std::size_t>(ancestors_[e])].emplace_back(d, e);
  for (const auto& list : below) {
    descendants_begin_.push_back(descendants_.size());
    for (const auto& [d, e] : list) {
      descendants_.push_back(d);
      descendant_entries_.push_back(e);
      descendant_limits_.push_back(last_[static_cast<std::size_t>(d)] + 1);
    }
  }
  descendants_begin_.push_back(descendants_.size());
  lower_.resize(ancestors_.size());
  diagonal_.resize(size);
  inverse_diagonal_.resize(size);
  sources_.resize(size);
  coefficients_.resize(size);
}

void TreeMassFactorization::factorize(const Eigen::MatrixXd& mass) {
  const int nv = size();
  // M's row k left of the diagonal, read as column k (M is symmetric; column-major).
  for (int k = 0; k < nv; ++k) {
    diagonal_[static_cast<std::size_t>(k)] = mass(k, k);
    for (std::size_t e = begin_[static_cast<std::size_t>(k)]; e < begin_[static_cast<std::size_t>(k) + 1]; ++e)
      lower_[e] = mass(ancestors_[e], k);
  }
  // Leaves first: row k of L from M's row k as updated by k's descendants; its ancestors'
  // rows and diagonal lose the part row k accounts for (Featherstone's Table 2). The
  // ancestors of ancestor i are the tail of k's list after i, so both rows are contiguous.
  for (int k = nv - 1; k >= 0; --k) {
    const auto kk = static_cast<std::size_t>(k);
    const double d = diagonal_[kk];
    if (!(d > 0.0)) throw SimulationError("singular configuration: the mass matrix is not positive definite");
    const double inverse = 1.0 / d;
    inverse_diagonal_[kk] = inverse;
    double* const row = lower_.data() + begin_[kk];
    const std::size_t depth = begin_[kk + 1] - begin_[kk];
    for (std::size_t p = 0; p < depth; ++p) {
      const auto i = static_cast<std::size_t>(ancestors_[begin_[kk] + p]);
      const double a = row[p] * inverse;
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
    double value = x(k) * inverse_diagonal_[static_cast<std::size_t>(k)];
    for (std::size_t e = begin_[static_cast<std::size_t>(k)]; e < begin_[static_cast<std::size_t>(k) + 1]; ++e)
      value -= lower_[e] * x(ancestors_[e]);
    x(k) = value;
  }
}

void TreeMassFactorization::inverse_and_solve_in_place(RowMajorMatrix& X) {
  const int nv = size();
  const Eigen::Index block = block_width(nv), width = X.cols(), blocks = nv > 0 ? width / block : 0;
  const auto down = [](Eigen::Index c) { return c / 8 * 8; };
  const auto up = [](Eigen::Index c) { return (c + 7) / 8 * 8; };
  for (int k = 0; k < nv; ++k) {  // the identity (row by row: a strided setIdentity costs a compare per entry)
    double* const row = X.row(k).data();
    std::fill(row, row + block, 0.0);
    row[k] = 1.0;
  }
  // X <- L^-T X, leaves first: row i gathers its descendants' final rows. A descendant d's
  // row is zero right of its last descendant in every block, and in M^-1's block also left
  // of d itself (L^-T is upper triangular with the tree's pattern). Ranges are widened to
  // whole groups of 8 columns (the padding is zero).
  for (int i = nv - 1; i >= 0; --i) {
    const auto ii = static_cast<std::size_t>(i);
    const std::size_t count = descendants_begin_[ii + 1] - descendants_begin_[ii];
    if (count == 0) continue;
    const std::size_t from = descendants_begin_[ii];
    for (std::size_t t = 0; t < count; ++t) {
      sources_[t] = X.row(descendants_[from + t]).data();
      coefficients_[t] = lower_[descendant_entries_[from + t]];
    }
    double* const row = X.row(i).data();
    for (Eigen::Index b = 0; b < blocks; ++b) {
      const Eigen::Index first = b * block;
      gather_rows<true>(row, first + (b == 0 ? down(i) : 0), first + up(last_[ii] + 1), 1.0, sources_.data(),
                        coefficients_.data(), descendant_limits_.data() + from, first, count);
    }
  }
  // X <- L^-1 D^-1 X, root first: row k gathers its ancestors' final rows; of M^-1's block
  // only the upper triangle (columns from k on, from the group of 8 that holds k: those
  // left of k are M^-1's entries too, as the ancestors' rows have them).
  for (int k = 0; k < nv; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const std::size_t count = begin_[kk + 1] - begin_[kk];
    for (std::size_t t = 0; t < count; ++t) {
      sources_[t] = X.row(ancestors_[begin_[kk] + t]).data();
      coefficients_[t] = lower_[begin_[kk] + t];
    }
    gather_rows<false>(X.row(k).data(), down(k), width, inverse_diagonal_[kk], sources_.data(), coefficients_.data(),
                       nullptr, 0, count);
  }
}

}  // namespace liembs
