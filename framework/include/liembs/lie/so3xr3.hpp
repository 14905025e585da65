#pragma once
// The direct product SO(3) x R^3 (paper 002 section 2.2), on the same element type Pose.
//
//   C_a C_b = (R_a R_b, r_a + r_b)  (002 eq. 16; not a frame transformation), C^-1 = (R^T, -r)
//   X = (omega, v): omega body-fixed angular velocity, v = r' the spatial (hybrid) linear
//   velocity (002 eq. 20): (hat(omega), v) = C^-1 C' in the direct product.
//   [X_a, X_b] = (w_a x w_b, 0)  (002 eq. 17),  exp(X) = (so3::exp(w), v)  (002 eq. 18)
//   dexp and dexp^-1 are the SO(3) ones on omega and the identity on v  (002 eq. 19).
// Matrix conventions match se3.hpp: Ad, ad, coad = -ad^T, coAd = Ad^-T, right/left
// trivializations of dexp with dexp_left(X) = dexp_right(-X). Every 6x6 operator here is
// block diagonal, [[SO(3) block, 0], [0, R^3 block]].
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs::so3xr3 {

namespace detail {
inline Mat6 block_diagonal(const Mat3& rotation_block, const Mat3& translation_block) {
  Mat6 A;
  A << rotation_block, Mat3::Zero(), Mat3::Zero(), translation_block;
  return A;
}
}  // namespace detail

// ---------------------------------------------------------------------------------------
// Group

inline Pose compose(const Pose& a, const Pose& b) {
  Pose out;
  out.R = a.R * b.R;
  out.r = a.r + b.r;
  return out;
}

inline Pose inverse(const Pose& C) {
  Pose out;
  out.R = C.R.transpose();
  out.r = -C.r;
  return out;
}

// Ad_C = blockdiag(R, I)
inline Mat6 Ad(const Pose& C) { return detail::block_diagonal(C.R, Mat3::Identity()); }

// Ad_C^-T = blockdiag(R, I) (R^-T = R)
inline Mat6 coAd(const Pose& C) { return detail::block_diagonal(C.R, Mat3::Identity()); }

// ---------------------------------------------------------------------------------------
// Algebra

// ad_X = blockdiag(hat(w), 0)
inline Mat6 ad(const Vec6& X) { return detail::block_diagonal(so3::hat(X.head<3>()), Mat3::Zero()); }

// coad(X) = -ad_X^T = blockdiag(hat(w), 0)
inline Mat6 coad(const Vec6& X) { return -ad(X).transpose(); }

// (w_a x w_b, 0)  (002 eq. 17)
inline Vec6 bracket(const Vec6& a, const Vec6& b) {
  Vec6 out;
  out << a.head<3>().cross(b.head<3>()), Vec3::Zero();
  return out;
}

// ---------------------------------------------------------------------------------------
// exp / log

// (so3::exp(w), v)  (002 eq. 18)
inline Pose exp(const Vec6& X) {
  Pose C;
  C.R = so3::exp(X.head<3>());
  C.r = X.tail<3>();
  return C;
}

// (so3::log(R), r); the angle is in [0, pi].
inline Vec6 log(const Pose& C) {
  Vec6 X;
  X << so3::log(C.R), C.r;
  return X;
}

// ---------------------------------------------------------------------------------------
// dexp and its inverse: blockdiag(SO(3) version, I)  (002 eq. 19)

inline Mat6 dexp_right(const Vec6& X) {
  return detail::block_diagonal(so3::dexp_right(X.head<3>()), Mat3::Identity());
}
inline Mat6 dexp_left(const Vec6& X) {
  return detail::block_diagonal(so3::dexp_left(X.head<3>()), Mat3::Identity());
}
inline Mat6 dexpinv_right(const Vec6& X) {
  return detail::block_diagonal(so3::dexpinv_right(X.head<3>()), Mat3::Identity());
}
inline Mat6 dexpinv_left(const Vec6& X) {
  return detail::block_diagonal(so3::dexpinv_left(X.head<3>()), Mat3::Identity());
}

// dexpinv_left(X) u = (so3::dexpinv_left(w) u_omega, u_v)
inline Vec6 dexpinv_left_apply(const Vec6& X, const Vec6& u) {
  Vec6 out;
  out << so3::dexpinv_left_apply(X.head<3>(), u.head<3>()), u.tail<3>();
  return out;
}

}  // namespace liembs::so3xr3
