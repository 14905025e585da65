#pragma once
// The rotation group SO(3): hat/vee, exp (Rodrigues), log, and the differential of exp
// with its inverse in both trivializations.
//
// Sign conventions (paper 001 section 2.5, paper 002 eqs. 9, 11), for R = exp(w), theta = |w|:
//   right-trivialized: R' R^T = hat(dexp_right(w) w'),  dexp_right(w) = sum_k ad_w^k / (k+1)!
//   left-trivialized:  R^T R' = hat(dexp_left(w) w'),   dexp_left(w)  = dexp_right(-w)
// with ad_w = hat(w). All of them are closed forms in
//   a = sin(theta)/theta, b = (1 - cos(theta))/theta^2, c = (theta - sin(theta))/theta^3,
//   d = (1 - (theta/2) cot(theta/2))/theta^2,
// which are evaluated from their Taylor series below theta = lie::series_threshold, where
// the closed forms lose digits to cancellation (relative error ~ eps/theta^2).
#include <liembs/lie/types.hpp>

#include <algorithm>
#include <cmath>

namespace liembs::lie {

// Which expansion a coefficient function uses; `automatic` picks the Taylor series below
// series_threshold and the closed form above. Forcing a branch is meant for tests.
enum class Branch { automatic, series, closed_form };

// Rotation angle below which the Taylor series of the coefficients are used. The series
// are kept to order theta^8; the first omitted (theta^10) term is below 1e-17 relative at
// the switch, while the closed forms there are good to ~1e-12 relative (worst: se3 c4, ~1e-9,
// which multiplies ad^4 ~ theta^3, so every operator agrees across the switch to ~1e-15).
inline constexpr double series_threshold = 0.1;

inline bool use_series(double theta, Branch branch) {
  return branch == Branch::series || (branch == Branch::automatic && theta < series_threshold);
}

}  // namespace liembs::lie

namespace liembs::so3 {

using lie::Branch;

// ---------------------------------------------------------------------------------------
// Scalar coefficients (functions of theta = |w| only)

struct RodriguesCoefficients {
  double a;  // sin(theta)/theta
  double b;  // (1 - cos(theta))/theta^2
  double c;  // (theta - sin(theta))/theta^3
};

inline RodriguesCoefficients rodrigues_coefficients(double theta, Branch branch = Branch::automatic) {
  const double t2 = theta * theta;
  if (lie::use_series(theta, branch)) {
    // sum_k (-1)^k t^(2k)/(2k+1)!, .../(2k+2)!, .../(2k+3)!
    return {1.0 + t2 * (-1.0 / 6 + t2 * (1.0 / 120 + t2 * (-1.0 / 5040 + t2 * (1.0 / 362880)))),
            0.5 + t2 * (-1.0 / 24 + t2 * (1.0 / 720 + t2 * (-1.0 / 40320 + t2 * (1.0 / 3628800)))),
            1.0 / 6 + t2 * (-1.0 / 120 + t2 * (1.0 / 5040 + t2 * (-1.0 / 362880 + t2 * (1.0 / 39916800))))};
  }
  // Half-angle forms: 1 - cos(theta) = 2 sin^2(theta/2) has no cancellation.
  const double s = std::sin(0.5 * theta), ch = std::cos(0.5 * theta);
  const double a = 2.0 * s * ch / theta;
  return {a, 2.0 * s * s / t2, (1.0 - a) / t2};
}

// d = (1 - (theta/2) cot(theta/2))/theta^2, the theta-dependent coefficient of dexp^-1
// (paper 002 eq. 11). Singular at theta = 2 pi.
inline double dexpinv_coefficient(double theta, Branch branch = Branch::automatic) {
  const double t2 = theta * theta;
  if (lie::use_series(theta, branch)) {
    // Bernoulli series: 1/12 + t^2/720 + t^4/30240 + t^6/1209600 + t^8/47900160 + ...
    return 1.0 / 12 + t2 * (1.0 / 720 + t2 * (1.0 / 30240 + t2 * (1.0 / 1209600 + t2 * (1.0 / 47900160))));
  }
  const double s = std::sin(0.5 * theta), ch = std::cos(0.5 * theta);
  return (1.0 - 0.5 * theta * ch / s) / t2;
}

// Derivatives of b and c with respect to theta, divided by theta:
//   db = b'(theta)/theta = (a - 2b)/theta^2,  dc = c'(theta)/theta = (b - 3c)/theta^2.
// They appear in the directional derivative of dexp (the SE(3) block Q, see se3.hpp).
struct RodriguesDerivatives {
  double db;
  double dc;
};

inline RodriguesDerivatives rodrigues_derivatives(double theta, Branch branch = Branch::automatic) {
  const double t2 = theta * theta;
  if (lie::use_series(theta, branch)) {
    return {-1.0 / 12 + t2 * (1.0 / 180 + t2 * (-1.0 / 6720 + t2 * (1.0 / 453600 + t2 * (-1.0 / 47900160)))),
            -1.0 / 60 + t2 * (1.0 / 1260 + t2 * (-1.0 / 60480 + t2 * (1.0 / 4989600 + t2 * (-1.0 / 622702080))))};
  }
  const RodriguesCoefficients k = rodrigues_coefficients(theta, Branch::closed_form);
  return {(k.a - 2.0 * k.b) / t2, (k.b - 3.0 * k.c) / t2};
}

// ---------------------------------------------------------------------------------------
// Algebra

// Skew matrix: hat(w) x = w x x.
inline Mat3 hat(const Vec3& w) {
  Mat3 W;
  W << 0.0, -w.z(), w.y(),  //
      w.z(), 0.0, -w.x(),   //
      -w.y(), w.x(), 0.0;
  return W;
}

// Inverse of hat, applied to the skew-symmetric part of W.
inline Vec3 vee(const Mat3& W) {
  return 0.5 * Vec3(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1));
}

// Adjoint of the algebra: ad_w v = w x v.
inline Mat3 ad(const Vec3& w) { return hat(w); }

// ---------------------------------------------------------------------------------------
// exp / log

// Rodrigues: exp(hat w) = I + a hat(w) + b hat(w)^2 (paper 001 eq. 64; paper 002 eq. 9 with
// the erratum: the last denominator is theta^2, not theta).
inline Mat3 exp(const Vec3& w, Branch branch) {
  const RodriguesCoefficients k = rodrigues_coefficients(w.norm(), branch);
  const Mat3 W = hat(w);
  const Mat3 W2 = W * W;
  return Mat3::Identity() + k.a * W + k.b * W2;  // same operation order as se3::exp
}
inline Mat3 exp(const Vec3& w) { return exp(w, Branch::automatic); }

// Rotation vector of R, with angle in [0, pi]. The angle is atan2(|s|, cos) with
// s = vee(R) = sin(theta) e, accurate at every angle. For theta < pi/2 the axis is s/|s|;
// above, where |s| = sin(theta) -> 0 carries the axis poorly, it is taken from the
// symmetric part (R + R^T)/2 - cos(theta) I = (1 - cos(theta)) e e^T (largest diagonal
// column) and its sign from s. At theta = pi exactly both signs are valid.
inline Vec3 log(const Mat3& R) {
  const Vec3 s = vee(R);
  const double sin_theta = s.norm();
  const double cos_theta = std::clamp(0.5 * (R.trace() - 1.0), -1.0, 1.0);
  const double theta = std::atan2(sin_theta, cos_theta);
  if (cos_theta > 0.0) {
    // theta/sin(theta) is well conditioned for small theta; only 0/0 needs a guard.
    return (sin_theta > 0.0 ? theta / sin_theta : 1.0) * s;
  }
  const Mat3 E = 0.5 * (R + R.transpose()) - cos_theta * Mat3::Identity();
  Eigen::Index k = 0;
  E.diagonal().maxCoeff(&k);
  Vec3 e = E.col(k).normalized();
  if (e.dot(s) < 0.0) e = -e;
  return theta * e;
}

// ---------------------------------------------------------------------------------------
// dexp and its inverse

// sum_k ad_w^k/(k+1)! = I + b hat(w) + c hat(w)^2 (paper 001 section 2.5).
inline Mat3 dexp_right(const Vec3& w, Branch branch) {
  const RodriguesCoefficients k = rodrigues_coefficients(w.norm(), branch);
  const Mat3 W = hat(w);
  const Mat3 W2 = W * W;
  return Mat3::Identity() + k.b * W + k.c * W2;
}
inline Mat3 dexp_right(const Vec3& w) { return dexp_right(w, Branch::automatic); }

inline Mat3 dexp_left(const Vec3& w, Branch branch) { return dexp_right(-w, branch); }
inline Mat3 dexp_left(const Vec3& w) { return dexp_right(-w, Branch::automatic); }

// I - 1/2 hat(w) + d hat(w)^2 (paper 002 eq. 11, Bullo & Murray). Valid for theta < 2 pi.
inline Mat3 dexpinv_right(const Vec3& w, Branch branch) {
  const double d = dexpinv_coefficient(w.norm(), branch);
  const Mat3 W = hat(w);
  const Mat3 W2 = W * W;
  return Mat3::Identity() - 0.5 * W + d * W2;
}
inline Mat3 dexpinv_right(const Vec3& w) { return dexpinv_right(w, Branch::automatic); }

inline Mat3 dexpinv_left(const Vec3& w, Branch branch) { return dexpinv_right(-w, branch); }
inline Mat3 dexpinv_left(const Vec3& w) { return dexpinv_right(-w, Branch::automatic); }

// dexpinv_left(w) v = v + 1/2 w x v + d w x (w x v), without forming the matrix.
inline Vec3 dexpinv_left_apply(const Vec3& w, const Vec3& v) {
  const double d = dexpinv_coefficient(w.norm());
  const Vec3 wxv = w.cross(v);
  return v + 0.5 * wxv + d * w.cross(wxv);
}

}  // namespace liembs::so3
