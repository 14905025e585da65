#pragma once
// Small structured types of the recursive kernels (recursive_algorithms.hpp), each with the
// few products the recursions need, so that no 6x6 matrix is formed where the structure
// makes most entries zero:
//   AxialScrew     a joint screw in its aligned node frame, (0, 0, a, 0, 0, l)
//                  (revolute: l = 0, helical: l = pitch a, prismatic: a = 0);
//   RigidInertia   the spatial inertia of a rigid body about a frame origin,
//                  [[I, h~], [-h~, m 1]] with h = m c (10 parameters instead of 36).
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs {

struct AxialScrew {
  double angular = 0.0;  // a
  double linear = 0.0;   // l

  Vec6 vector() const {
    Vec6 X = Vec6::Zero();
    X(2) = angular;
    X(5) = linear;
    return X;
  }
};

// V += S x
LIEMBS_STRONG_INLINE void add_screw(Vec6& V, const AxialScrew& S, double x) {
  V(2) += S.angular * x;
  V(5) += S.linear * x;
}
LIEMBS_STRONG_INLINE void add_screw(Vec6& V, const Vec6& S, double x) { V += S * x; }

// S . W
LIEMBS_STRONG_INLINE double screw_dot(const AxialScrew& S, const Vec6& W) { return S.angular * W(2) + S.linear * W(5); }
// In scalars: W is often just written element by element (transpose_in_place), and a
// vectorized dot would read those stores back as pairs (a store-forwarding stall).
LIEMBS_STRONG_INLINE double screw_dot(const Vec6& S, const Vec6& W) {
  return S(0) * W(0) + S(1) * W(1) + S(2) * W(2) + S(3) * W(3) + S(4) * W(4) + S(5) * W(5);
}

// I S: the columns 2 and 5 of I
LIEMBS_STRONG_INLINE Vec6 inertia_times_screw(const Mat6& I, const AxialScrew& S) {
  return I.col(2) * S.angular + I.col(5) * S.linear;
}
LIEMBS_STRONG_INLINE Vec6 inertia_times_screw(const Mat6& I, const Vec6& S) { return I * S; }

struct RigidInertia {
  double m = 0.0;
  Vec3 h = Vec3::Zero();     // first moment m c
  Mat3 I = Mat3::Zero();     // rotational inertia about the frame origin

  static RigidInertia from_matrix(const Mat6& M) {
    RigidInertia out;
    out.m = M(5, 5);
    out.h << M(2, 4), M(0, 5), M(1, 3);  // the upper-right block is h~
    out.I = M.topLeftCorner<3, 3>();
    return out;
  }
  Mat6 matrix() const {
    const Mat3 H = so3::hat(h);
    Mat6 M;
    M << I, H, -H, m * Mat3::Identity();
    return M;
  }
  RigidInertia& operator+=(const RigidInertia& other) {
    m += other.m;
    h += other.h;
    I += other.I;
    return *this;
  }
  // Momentum (I w + h x v, m v - h x w) of a twist (w, v).
  LIEMBS_STRONG_INLINE Vec6 operator*(const Vec6& V) const {
    const Vec3 w = V.head<3>(), v = V.tail<3>();
    Vec6 out;
    out.head<3>().noalias() = I * w;
    out.head<3>() += h.cross(v);
    out.tail<3>() = m * v - h.cross(w);
    return out;
  }
  // The same for an axial screw (0, 0, a, 0, 0, l): a I e_z + l h x e_z, m l e_z - a h x e_z.
  LIEMBS_STRONG_INLINE Vec6 operator*(const AxialScrew& S) const {
    Vec6 out;
    out.head<3>() = I.col(2) * S.angular;
    out(0) += S.linear * h.y();
    out(1) -= S.linear * h.x();
    out(3) = -S.angular * h.y();
    out(4) = S.angular * h.x();
    out(5) = m * S.linear;
    return out;
  }
};

namespace se3 {
// [V, S] = (a w x e_z, l w x e_z + a v x e_z) for V = (w, v), w x e_z = (w_y, -w_x, 0): the
// bracket of se3.hpp with the zeros of S skipped. In 2-vectors: written element by element
// (a comma initializer), the result was read back as pairs right away (a store-forwarding
// stall in the body-fixed velocity term).
LIEMBS_STRONG_INLINE Vec6 bracket(const Vec6& V, const AxialScrew& S) {
  const Eigen::Vector2d w_perp(V(1), -V(0)), v_perp(V(4), -V(3));
  Vec6 out;
  out.segment<2>(0) = S.angular * w_perp;
  out.segment<2>(3) = S.linear * w_perp + S.angular * v_perp;
  out(2) = out(5) = 0.0;
  return out;
}
}  // namespace se3

LIEMBS_STRONG_INLINE const Mat6& as_matrix(const Mat6& M) { return M; }
LIEMBS_STRONG_INLINE Mat6 as_matrix(const RigidInertia& M) { return M.matrix(); }

}  // namespace liembs
