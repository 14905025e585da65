#pragma once
// Restarted GMRES (Saad and Schultz, SIAM J. Sci. Stat. Comput. 7(3), 1986) for A x = b with
// A given only through products A v: the matrix-free Newton solves of the implicit integrators
// on long chains (docs/newton-matrices.md, "Long chains"), where A v is a directional difference
// of the Newton residual, one O(n) forward-dynamics evaluation, and A itself (n x n, its
// factorization O(n^3)) is never formed. Modified Gram-Schmidt on the Krylov basis, Givens
// rotations on the Hessenberg matrix; x starts at 0.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>

namespace liembs {

class KrylovSolver {
 public:
  struct Result {
    int products = 0;       // evaluations of A v
    double residual = 0.0;  // |b - A x| / |b| reached
    bool converged = false;
  };

  // Solves A x = b to |b - A x| <= relative_tolerance |b| with at most max_products products,
  // restarting every `restart` of them. apply(v, out) sets out = A v.
  template <class Apply>
  Result solve(Apply&& apply, const Eigen::VectorXd& b, Eigen::VectorXd& x, double relative_tolerance,
               int max_products, int restart) {
    const Eigen::Index n = b.size();
    const int width = std::max(1, std::min(restart, static_cast<int>(n)));
    x.setZero(n);
    Result result;
    const double b_norm = b.norm();
    if (b_norm == 0.0 || !std::isfinite(b_norm)) {
      result.converged = b_norm == 0.0;
      result.residual = b_norm == 0.0 ? 0.0 : b_norm;
      return result;
    }
    basis_.resize(n, width + 1);
    hessenberg_.setZero(width + 1, width);
    cosines_.resize(width);
    sines_.resize(width);
    rotated_.resize(width + 1);
    residual_ = b;
    double residual_norm = b_norm;
    while (result.products < max_products) {
      // One cycle from the residual r = b - A x: x += V_k y minimizing |r - A V_k y|.
      basis_.col(0) = residual_ / residual_norm;
      rotated_.setZero();
      rotated_(0) = residual_norm;
      int k = 0;
      for (; k < width && result.products < max_products;) {
        apply(basis_.col(k), product_);
        ++result.products;
        for (int i = 0; i <= k; ++i) {
          hessenberg_(i, k) = basis_.col(i).dot(product_);
          product_ -= hessenberg_(i, k) * basis_.col(i);
        }
        const double norm = product_.norm();
        hessenberg_(k + 1, k) = norm;
        for (int i = 0; i < k; ++i) rotate(i, hessenberg_(i, k), hessenberg_(i + 1, k));
        const double a = hessenberg_(k, k), c = hessenberg_(k + 1, k), radius = std::hypot(a, c);
        cosines_(k) = radius > 0.0 ? a / radius : 1.0;
        sines_(k) = radius > 0.0 ? c / radius : 0.0;
        hessenberg_(k, k) = radius;
        hessenberg_(k + 1, k) = 0.0;
        rotate(k, rotated_(k), rotated_(k + 1));
        ++k;
        if (!(norm > 0.0) || std::abs(rotated_(k)) <= relative_tolerance * b_norm) break;  // converged or exact
        basis_.col(k) = product_ / norm;
      }
      // y from the triangular k x k system, x += V_k y.
      coefficients_ = hessenberg_.topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(rotated_.head(k));
      x.noalias() += basis_.leftCols(k) * coefficients_;
      residual_norm = std::abs(rotated_(k));
      if (!std::isfinite(residual_norm)) break;
      if (residual_norm <= relative_tolerance * b_norm || result.products >= max_products) break;
      // Restart from the true residual (the rotated one drifts with round-off).
      apply(x, product_);
      ++result.products;
      residual_ = b - product_;
      residual_norm = residual_.norm();
      if (residual_norm <= relative_tolerance * b_norm) break;
    }
    result.residual = residual_norm / b_norm;
    result.converged = result.residual <= relative_tolerance;
    return result;
  }

 private:
  // (u, w) <- G_i (u, w) with the i-th Givens rotation.
  void rotate(int i, double& u, double& w) const {
    const double first = cosines_(i) * u + sines_(i) * w;
    w = -sines_(i) * u + cosines_(i) * w;
    u = first;
  }

  Eigen::MatrixXd basis_, hessenberg_;
  Eigen::VectorXd cosines_, sines_, rotated_, coefficients_, residual_, product_;
};

// Inexact Newton steps for residuals of the form R(a) = a - F(a) (an ODE V' = F solved for the
// acceleration a, M = 1), matrix-free: GMRES on J d = -R with
//   J v = v - (F(a + e v) - F(a)) / e,   e = sqrt(eps) (1 + |a|) / |v|,
// one evaluation of F per product. J is the exact derivative of R along the integrator's own
// update formulas (the tangent of exp included), so Newton converges as with the exact matrix.
// Used by generalized-alpha and bdf for long chains (docs/newton-matrices.md, "Long chains").
class MatrixFreeNewton {
 public:
  // GMRES restarted every `restart` products, at most `max_products` per Newton step.
  static constexpr int restart = 40, max_products = 400;
  // The linear residual falls to a tenth of `tolerance` relative to the Newton residual, the
  // factor kept within [1e-6, 1e-2] (Eisenstat and Walker's forcing terms, simplified).
  static double forcing(double tolerance, double residual) {
    return std::clamp(0.1 * tolerance / std::max(residual, 1e-300), 1e-6, 1e-2);
  }

  // d for the residual R at a, whose F(a) is `rates`; rates_at(a') returns F(a') (a reference
  // valid until the next call). False if d is not finite.
  template <class RatesAt>
  bool solve(RatesAt&& rates_at, const Eigen::VectorXd& acceleration, const Eigen::VectorXd& rates,
             const Eigen::VectorXd& residual, Eigen::VectorXd& step, double forcing) {
    const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
    const double acceleration_norm = acceleration.norm();
    auto product = [&](const Eigen::Ref<const Eigen::VectorXd>& direction, Eigen::VectorXd& out) {
      const double direction_norm = direction.norm();
      if (direction_norm == 0.0) {
        out.setZero(direction.size());
        return;
      }
      const double e = root_eps * (1.0 + acceleration_norm) / direction_norm;
      probe_ = acceleration + e * direction;
      const Eigen::VectorXd& probe_rates = rates_at(probe_);
      out = direction - (probe_rates - rates) / e;
    };
    right_hand_side_ = -residual;
    products_ += krylov_.solve(product, right_hand_side_, step, forcing, max_products, restart).products;
    return step.allFinite();
  }

  // Products (evaluations of F) since the last reset.
  long long products() const { return products_; }
  void reset() { products_ = 0; }

 private:
  KrylovSolver krylov_;
  Eigen::VectorXd probe_, right_hand_side_;
  long long products_ = 0;
};

}  // namespace liembs
