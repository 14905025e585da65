#pragma once
// The special Euclidean group SE(3) = SO(3) x| R^3 with body-fixed twists (paper 002 section
// 2.1, paper 001 section 2.3-2.5).
//
// Conventions:
//   C = (R, r) ~ [[R, r], [0, 1]],  C_a C_b = (R_a R_b, r_a + R_a r_b)     (002 eq. 5)
//   X = (omega, v),  hat(X) = [[hat(omega), v], [0, 0]]
//   Ad_C = [[R, 0], [hat(r) R, R]],  ad_X = [[hat(omega), 0], [hat(v), hat(omega)]]  (001 eq. 73; 002 eq. 7)
//   body twist V: hat(V) = C^-1 C'  (002 eq. 6); spatial twist: hat(V^s) = C' C^-1 = hat(Ad_C V)
//   right-trivialized dexp: C' C^-1 = hat(dexp_right(X) X')  for C = exp(X), dexp_right = sum ad^k/(k+1)!
//   left-trivialized dexp:  C^-1 C' = hat(dexp_left(X) X'),   dexp_left(X) = dexp_right(-X)
//
// Wrenches and momenta are paired with twists by the plain dot product <h, V>:
//   coad(X) := -ad_X^T  (the co-adjoint action of the algebra, so <coad(X) h, Y> = -<h, [X, Y]>),
//   coAd(C) := Ad_C^-T  (maps a wrench or momentum given in the body frame C to the frame C
//                        is expressed in; coAd(exp X) = matrix exp of coad(X)).
// With these, the momentum balance of a rigid body in body-fixed coordinates
// (Euler-Poincare / Newton-Euler; h = (L, p) = (6x6 spatial inertia) V the body momentum,
// W = (m, f) the applied body wrench) reads
//   h' = ad_V^T h + W = -coad(V) h + W,  i.e.  L' = L x omega + p x v + m,  p' = p x omega + f.
//
// The dual-number view behind the dexp blocks: ad_X acts on Y = (y, u) like hat(omega) +
// eps hat(v) (eps^2 = 0) acts on y + eps u. Hence any power series f(ad_X) is
// [[f(hat w), 0], [D f(hat w)[hat v], f(hat w)]], and the lower-left block of dexp_right is
// the directional derivative Q(w, v) = d/ds so3::dexp_right(w + s v) at s = 0.
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs::se3 {

using lie::Branch;

// ---------------------------------------------------------------------------------------
// Algebra

inline Mat4 hat(const Vec6& X) {
  Mat4 Xhat = Mat4::Zero();
  Xhat.topLeftCorner<3, 3>() = so3::hat(X.head<3>());
  Xhat.topRightCorner<3, 1>() = X.tail<3>();
  return Xhat;
}

// Inverse of hat (the rotation block is read through its skew-symmetric part).
inline Vec6 vee(const Mat4& Xhat) {
  Vec6 X;
  X << so3::vee(Xhat.topLeftCorner<3, 3>()), Xhat.topRightCorner<3, 1>();
  return X;
}

inline Mat6 ad(const Vec6& X) {
  const Mat3 W = so3::hat(X.head<3>());
  Mat6 A;
  A << W, Mat3::Zero(), so3::hat(X.tail<3>()), W;
  return A;
}

// [a, b] = ad_a b = (w_a x w_b, w_a x v_b - w_b x v_a)  (002 section 2.1)
// (wa x wb, wa x vb + va x wb), in scalars, written as pairs (types.hpp, "Pairs").
LIEMBS_STRONG_INLINE Vec6 bracket(const Vec6& a, const Vec6& b) {
  const double w0 = a(0), w1 = a(1), w2 = a(2), v0 = a(3), v1 = a(4), v2 = a(5);
  const double x0 = b(0), x1 = b(1), x2 = b(2), y0 = b(3), y1 = b(4), y2 = b(5);
  return pairs(w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0,
               (w1 * y2 - w2 * y1) + (v1 * x2 - v2 * x1), (w2 * y0 - w0 * y2) + (v2 * x0 - v0 * x2),
               (w0 * y1 - w1 * y0) + (v0 * x1 - v1 * x0));
}

// Co-adjoint operator ad*_X = -ad_X^T (sign choice: see the header comment).
inline Mat6 coad(const Vec6& X) { return -ad(X).transpose(); }

// ---------------------------------------------------------------------------------------
// Group

// out = a b, in scalars: its 12 numbers (R column by column, then r) written as 6 pairs
// (types.hpp, "Pairs"), for the recursive kernels' world poses. out must not alias a or b.
LIEMBS_STRONG_INLINE void compose_into(const Pose& a, const Pose& b, Pose& out) {
  static_assert(sizeof(Pose) == 12 * sizeof(double), "Pose is R then r, unpadded");
  const Mat3& A = a.R;
  const Mat3& B = b.R;
  auto row_dot = [&A](int i, double x0, double x1, double x2) { return A(i, 0) * x0 + A(i, 1) * x1 + A(i, 2) * x2; };
  const double t0 = row_dot(0, b.r(0), b.r(1), b.r(2)) + a.r(0), t1 = row_dot(1, b.r(0), b.r(1), b.r(2)) + a.r(1),
               t2 = row_dot(2, b.r(0), b.r(1), b.r(2)) + a.r(2);
  double* flat = out.R.data();
  const auto column = [&](int j, int i) { return row_dot(i, B(0, j), B(1, j), B(2, j)); };
  store_pair(flat + 0, column(0, 0), column(0, 1));
  store_pair(flat + 2, column(0, 2), column(1, 0));
  store_pair(flat + 4, column(1, 1), column(1, 2));
  store_pair(flat + 6, column(2, 0), column(2, 1));
  store_pair(flat + 8, column(2, 2), t0);
  store_pair(flat + 10, t1, t2);
}
LIEMBS_STRONG_INLINE Pose compose(const Pose& a, const Pose& b) {
  Pose out;
  compose_into(a, b, out);
  return out;
}

inline Pose inverse(const Pose& C) {
  Pose out;
  out.R = C.R.transpose();
  out.r = -(out.R * C.r);
  return out;
}

inline Vec3 transform_point(const Pose& C, const Vec3& p) { return C.R * p + C.r; }

// Ad_C = [[R, 0], [hat(r) R, R]]
inline Mat6 Ad(const Pose& C) {
  Mat6 A;
  A << C.R, Mat3::Zero(), so3::hat(C.r) * C.R, C.R;
  return A;
}

// Ad_{C^-1} = [[R^T, 0], [-R^T hat(r), R^T]]
inline Mat6 Ad_inverse(const Pose& C) {
  const Mat3 Rt = C.R.transpose();
  Mat6 A;
  A << Rt, Mat3::Zero(), -Rt * so3::hat(C.r), Rt;
  return A;
}

// Ad_C^-T = [[R, hat(r) R], [0, R]]: (moment, force) in frame C -> in the frame C is given in.
inline Mat6 coAd(const Pose& C) {
  Mat6 A;
  A << C.R, so3::hat(C.r) * C.R, Mat3::Zero(), C.R;
  return A;
}

// ---------------------------------------------------------------------------------------
// exp / log

// exp(hat X) = [[exp(hat w), dexp_right_so3(w) v], [0, 1]], i.e. translation
// t = (I + (1-cos)/th^2 hat(w) + (th-sin)/th^3 hat(w)^2) v: the non-singular form of
// paper 002 eq. 8 (001 section 2.5), with Taylor coefficients near theta = 0.
inline Pose exp(const Vec6& X, Branch branch) {
  const Vec3 w = X.head<3>(), v = X.tail<3>();
  const so3::RodriguesCoefficients k = so3::rodrigues_coefficients(w.norm(), branch);
  const Mat3 W = so3::hat(w);
  const Mat3 W2 = W * W;
  Pose C;
  C.R = Mat3::Identity() + k.a * W + k.b * W2;
  C.r = v + k.b * (W * v) + k.c * (W2 * v);
  return C;
}
inline Pose exp(const Vec6& X) { return exp(X, Branch::automatic); }

// omega = so3::log(R) (angle in [0, pi], robust near 0 and pi), v = dexp_right_so3(omega)^-1 r
// (001 section 2.5). At angle pi either sign of omega may be returned; exp(log(C)) = C holds.
inline Vec6 log(const Pose& C) {
  const Vec3 w = so3::log(C.R);
  Vec6 X;
  X << w, so3::dexpinv_right(w) * C.r;
  return X;
}

// ---------------------------------------------------------------------------------------
// dexp and its inverse

// Lower-left block of dexp_right: Q(w, v) = d/ds [I + b hat(w) + c hat(w)^2](w + s v)
//   = b hat(v) + c (hat(w) hat(v) + hat(v) hat(w)) + (w.v) (db hat(w) + dc hat(w)^2),
// with db = b'/theta, dc = c'/theta (so3::rodrigues_derivatives).
inline Mat3 dexp_right_lower_block(const Vec3& w, const Vec3& v, Branch branch = Branch::automatic) {
  const double theta = w.norm();
  const so3::RodriguesCoefficients k = so3::rodrigues_coefficients(theta, branch);
  const so3::RodriguesDerivatives dk = so3::rodrigues_derivatives(theta, branch);
  const Mat3 W = so3::hat(w), V = so3::hat(v);
  const double wv = w.dot(v);
  return k.b * V + k.c * (W * V + V * W) + wv * (dk.db * W + dk.dc * (W * W));
}

// sum_k ad_X^k/(k+1)! = [[J(w), 0], [Q(w, v), J(w)]], J = so3::dexp_right.
inline Mat6 dexp_right(const Vec6& X, Branch branch) {
  const Vec3 w = X.head<3>(), v = X.tail<3>();
  const Mat3 J = so3::dexp_right(w, branch);
  Mat6 D;
  D << J, Mat3::Zero(), dexp_right_lower_block(w, v, branch), J;
  return D;
}
inline Mat6 dexp_right(const Vec6& X) { return dexp_right(X, Branch::automatic); }

inline Mat6 dexp_left(const Vec6& X, Branch branch) { return dexp_right(-X, branch); }
inline Mat6 dexp_left(const Vec6& X) { return dexp_right(-X, Branch::automatic); }

// Coefficients of dexp_right^-1 = I - 1/2 ad + c2 ad^2 + c4 ad^4 (paper 002 eq. 10, Selig):
//   c2 = 2/th^2 + (th + 3 sin th)/(4 th (cos th - 1)),  c4 = 1/th^4 + (th + sin th)/(4 th^3 (cos th - 1)).
// The closed form is evaluated with cos th - 1 = -2 sin^2(th/2); it still cancels like
// eps/th^4 in c4 (002 "numerical pitfall"), so below series_threshold the Taylor series
//   c2 = 1/12 - th^4/30240 - th^6/604800 - th^8/15966720
//   c4 = -1/720 - th^2/15120 - th^4/403200 - th^6/11975040 - 691 th^8/261534873600
// is used. Singular at theta = 2 pi.
struct DexpinvCoefficients {
  double c2;
  double c4;
};

inline DexpinvCoefficients dexpinv_coefficients(double theta, Branch branch = Branch::automatic) {
  const double t2 = theta * theta;
  if (lie::use_series(theta, branch)) {
    return {1.0 / 12 + t2 * t2 * (-1.0 / 30240 + t2 * (-1.0 / 604800 + t2 * (-1.0 / 15966720))),
            -1.0 / 720 +
                t2 * (-1.0 / 15120 + t2 * (-1.0 / 403200 + t2 * (-1.0 / 11975040 + t2 * (-691.0 / 261534873600))))};
  }
  const double s = std::sin(0.5 * theta);
  const double one_minus_cos = 2.0 * s * s;
  const double sin_theta = std::sin(theta);
  return {2.0 / t2 - (theta + 3.0 * sin_theta) / (4.0 * theta * one_minus_cos),
          1.0 / (t2 * t2) - (theta + sin_theta) / (4.0 * theta * t2 * one_minus_cos)};
}

// I - 1/2 ad_X + c2 ad_X^2 + c4 ad_X^4 (002 eq. 10). Valid for |omega| < 2 pi.
inline Mat6 dexpinv_right(const Vec6& X, Branch branch) {
  const DexpinvCoefficients k = dexpinv_coefficients(X.head<3>().norm(), branch);
  const Mat6 A = ad(X);
  const Mat6 A2 = A * A;
  return Mat6::Identity() - 0.5 * A + k.c2 * A2 + k.c4 * (A2 * A2);
}
inline Mat6 dexpinv_right(const Vec6& X) { return dexpinv_right(X, Branch::automatic); }

inline Mat6 dexpinv_left(const Vec6& X, Branch branch) { return dexpinv_right(-X, branch); }
inline Mat6 dexpinv_left(const Vec6& X) { return dexpinv_right(-X, Branch::automatic); }

// dexpinv_left(X) u = dexpinv_right(-X) u = u + 1/2 [X, u] + c2 [X, [X, u]] + c4 [X, [X, [X, [X, u]]]]
// (only the odd term flips sign), from four brackets. Used by the Munthe-Kaas stages
// (002 eq. 37: k_j = dexp^-1_{-Psi_j} F).
inline Vec6 dexpinv_left_apply(const Vec6& X, const Vec6& u) {
  const DexpinvCoefficients k = dexpinv_coefficients(X.head<3>().norm());
  const Vec6 a1 = bracket(X, u);
  const Vec6 a2 = bracket(X, a1);
  const Vec6 a4 = bracket(X, bracket(X, a2));
  return u + 0.5 * a1 + k.c2 * a2 + k.c4 * a4;
}

}  // namespace liembs::se3
