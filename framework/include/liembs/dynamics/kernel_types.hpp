#pragma once
// Small structured types of the recursive kernels (recursive_algorithms.hpp), each with the
// few products the recursions need, so that no 6x6 matrix is formed where the structure
// makes most entries zero:
//   AxialScrew     a joint screw in its aligned node frame, (0, 0, a, 0, 0, l)
//                  (revolute: l = 0, helical: l = pitch a, prismatic: a = 0);
//   RigidInertia   the spatial inertia of a rigid body about a frame origin,
//                  [[I, h~], [-h~, m 1]] with h = m c (10 parameters instead of 36);
//   CentroidalInertia  the same body about its centre of mass (m, c, I_c).
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs {

// The products below write their 6-vector results as aligned pairs (set_pair, types.hpp).

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

// V += S x, as the pairs (2, 3) and (4, 5).
LIEMBS_STRONG_INLINE void add_screw(Vec6& V, const AxialScrew& S, double x) {
  add_to_pair(V, 2, S.angular * x, 0.0);
  add_to_pair(V, 4, 0.0, S.linear * x);
}
LIEMBS_STRONG_INLINE void add_screw(Vec6& V, const Vec6& S, double x) { V += S * x; }

// S . W
LIEMBS_STRONG_INLINE double screw_dot(const AxialScrew& S, const Vec6& W) { return S.angular * W(2) + S.linear * W(5); }
// In scalars: W is often just written element by element (add_transpose_to), and a
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
  // Momentum (I w + h x v, m v - h x w) of a twist (w, v), in scalars, written as pairs.
  LIEMBS_STRONG_INLINE Vec6 operator*(const Vec6& V) const {
    const double w0 = V(0), w1 = V(1), w2 = V(2), v0 = V(3), v1 = V(4), v2 = V(5);
    Vec6 out;
    set_pair(out, 0, I(0, 0) * w0 + I(0, 1) * w1 + I(0, 2) * w2 + (h(1) * v2 - h(2) * v1),
             I(1, 0) * w0 + I(1, 1) * w1 + I(1, 2) * w2 + (h(2) * v0 - h(0) * v2));
    set_pair(out, 2, I(2, 0) * w0 + I(2, 1) * w1 + I(2, 2) * w2 + (h(0) * v1 - h(1) * v0),
             m * v0 - (h(1) * w2 - h(2) * w1));
    set_pair(out, 4, m * v1 - (h(2) * w0 - h(0) * w2), m * v2 - (h(0) * w1 - h(1) * w0));
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

// R S R^T for a symmetric S: T = R S, then the upper triangle of T R^T, mirrored (45
// products instead of 54, and exactly symmetric).
LIEMBS_STRONG_INLINE Mat3 rotate_symmetric(const Mat3& R, const Mat3& S) {
  const Mat3 T = R * S;
  const auto entry = [&](int i, int j) { return T(i, 0) * R(j, 0) + T(i, 1) * R(j, 1) + T(i, 2) * R(j, 2); };
  const double a00 = entry(0, 0), a01 = entry(0, 1), a02 = entry(0, 2), a11 = entry(1, 1), a12 = entry(1, 2), a22 = entry(2, 2);
  Mat3 out;
  out << a00, a01, a02, a01, a11, a12, a02, a12, a22;
  return out;
}

// The rigid-body inertia (m, h, I) about a point O, taken about O - s instead (the body seen
// from a frame whose origin is at -s): h + m s and, with g = h + (m/2) s,
// I - (s g^T + g s^T) + 2 (g.s) 1 = I - (s h^T + h s^T) + 2 (h.s) 1 - m (s s^T - s.s 1).
// Symmetric, 6 entries of 2 products each.
LIEMBS_STRONG_INLINE RigidInertia shifted_inertia(double m, const Vec3& h, const Mat3& I, const Vec3& s) {
  const double half = 0.5 * m;
  const double g0 = h(0) + half * s(0), g1 = h(1) + half * s(1), g2 = h(2) + half * s(2);
  const double d = 2.0 * (g0 * s(0) + g1 * s(1) + g2 * s(2));
  RigidInertia out;
  out.m = m;
  out.h = h + m * s;
  const double a00 = I(0, 0) - 2.0 * s(0) * g0 + d, a11 = I(1, 1) - 2.0 * s(1) * g1 + d, a22 = I(2, 2) - 2.0 * s(2) * g2 + d;
  const double a01 = I(0, 1) - (s(0) * g1 + g0 * s(1)), a02 = I(0, 2) - (s(0) * g2 + g0 * s(2)), a12 = I(1, 2) - (s(1) * g2 + g1 * s(2));
  out.I << a00, a01, a02, a01, a11, a12, a02, a12, a22;
  return out;
}

// A rigid body's inertia about its centre of mass c (frame orientation): I_c = I - m (c.c 1 - c c^T).
// A massless body (a node between the axes of a multi-axis joint) has c = 0 and I_c = I.
struct CentroidalInertia {
  double m = 0.0;
  Vec3 c = Vec3::Zero();
  Mat3 I = Mat3::Zero();

  static CentroidalInertia from(const RigidInertia& M) {
    CentroidalInertia out;
    out.m = M.m;
    out.I = M.I;
    if (M.m > 0.0) {
      out.c = M.h / M.m;
      out.I -= M.m * (out.c.squaredNorm() * Mat3::Identity() - out.c * out.c.transpose());
    }
    return out;
  }
};

namespace se3 {
// [V, S] = (a w x e_z, l w x e_z + a v x e_z) for V = (w, v), w x e_z = (w_y, -w_x, 0): the
// bracket of se3.hpp with the zeros of S skipped, written as pairs.
LIEMBS_STRONG_INLINE Vec6 bracket(const Vec6& V, const AxialScrew& S) {
  const double a = S.angular, l = S.linear;
  Vec6 out;
  set_pair(out, 0, a * V(1), -a * V(0));
  set_pair(out, 2, 0.0, l * V(1) + a * V(4));
  set_pair(out, 4, -l * V(0) - a * V(3), 0.0);
  return out;
}
}  // namespace se3

LIEMBS_STRONG_INLINE const Mat6& as_matrix(const Mat6& M) { return M; }
LIEMBS_STRONG_INLINE Mat6 as_matrix(const RigidInertia& M) { return M.matrix(); }

}  // namespace liembs
