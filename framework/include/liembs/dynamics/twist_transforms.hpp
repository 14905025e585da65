#pragma once
// Linear maps T that carry a twist from a parent node's representation to a child node's,
// V_child = T V_parent (apply), together with the dual map of wrenches (T^T:
// add_transpose_to) and the congruence of inertias (T^T I T). Each representation uses the cheapest structure its frames allow
// (000 section 5.6): a full SE(3) adjoint (body-fixed), the identity (spatial), a change of
// reference point (hybrid), or a rotation of the angular part plus a point change (mixed).
#include <liembs/dynamics/kernel_types.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs::twist_transforms {

// hat(r) M, column by column (18 products instead of 27).
LIEMBS_STRONG_INLINE Mat3 hat_times(const Vec3& r, const Mat3& M) {
  Mat3 out;
  out.col(0) = r.cross(M.col(0));
  out.col(1) = r.cross(M.col(1));
  out.col(2) = r.cross(M.col(2));
  return out;
}

// Ad_{C^-1} = [[R^T, 0], [-R^T r~, R^T]] for C = (R, r), the pose of the child frame in the
// parent frame: parent-frame twists to child-frame twists.
struct Adjoint {
  Pose C;

  // In scalars, written as pairs (types.hpp, "Pairs").
  LIEMBS_STRONG_INLINE Vec6 apply(const Vec6& V) const {
    const Mat3& R = C.R;
    const Vec3& r = C.r;
    const double w0 = V(0), w1 = V(1), w2 = V(2);
    const double u0 = V(3) - (r(1) * w2 - r(2) * w1), u1 = V(4) - (r(2) * w0 - r(0) * w2),
                 u2 = V(5) - (r(0) * w1 - r(1) * w0);
    auto column_dot = [&R](int j, double x0, double x1, double x2) { return R(0, j) * x0 + R(1, j) * x1 + R(2, j) * x2; };
    Vec6 out;
    set_pair(out, 0, column_dot(0, w0, w1, w2), column_dot(1, w0, w1, w2));
    set_pair(out, 2, column_dot(2, w0, w1, w2), column_dot(0, u0, u1, u2));
    set_pair(out, 4, column_dot(1, u0, u1, u2), column_dot(2, u0, u1, u2));
    return out;
  }
  // Ad_{C^-1}^T (m, f) = (R m + r x R f, R f): child-frame wrenches to the parent frame.
  LIEMBS_STRONG_INLINE static Vec6 wrench_to_parent(const Pose& C, const Vec6& W) {
    Vec6 out;
    out.tail<3>().noalias() = C.R * W.tail<3>();
    out.head<3>().noalias() = C.R * W.head<3>();
    out.head<3>() += C.r.cross(out.tail<3>());
    return out;
  }
  // target += Ad_{C^-1}^T W, in scalars and added to target as pairs: summing a returned
  // vector read back the scalar stores of the cross product as pairs (a store-forwarding
  // stall in RNEA's backward pass; types.hpp, "Pairs").
  LIEMBS_STRONG_INLINE void add_transpose_to(const Vec6& W, Vec6& target) const {
    const Mat3& R = C.R;
    const Vec3& r = C.r;
    const double f0 = R(0, 0) * W(3) + R(0, 1) * W(4) + R(0, 2) * W(5);
    const double f1 = R(1, 0) * W(3) + R(1, 1) * W(4) + R(1, 2) * W(5);
    const double f2 = R(2, 0) * W(3) + R(2, 1) * W(4) + R(2, 2) * W(5);
    const double m0 = R(0, 0) * W(0) + R(0, 1) * W(1) + R(0, 2) * W(2) + r(1) * f2 - r(2) * f1;
    const double m1 = R(1, 0) * W(0) + R(1, 1) * W(1) + R(1, 2) * W(2) + r(2) * f0 - r(0) * f2;
    const double m2 = R(2, 0) * W(0) + R(2, 1) * W(1) + R(2, 2) * W(2) + r(0) * f1 - r(1) * f0;
    add_to_pair(target, 0, m0, m1);
    add_to_pair(target, 2, m2, f0);
    add_to_pair(target, 4, f1, f2);
  }
  // Ad_{C^-1}^T I Ad_{C^-1}: the child-frame inertia I = [[A, B], [B^T, D]] in the parent
  // frame. Ad_{C^-1} = diag(R^T, R^T) [[1, 0], [-P, 1]], P = r~: rotate every block, then
  // shift the reference point: A - B P + P B^T - P D P, B + P D, D.
  LIEMBS_STRONG_INLINE Mat6 congruence(const Mat6& I) const {
    const Mat3& R = C.R;
    const Mat3 A = R * I.topLeftCorner<3, 3>() * R.transpose();
    const Mat3 B = R * I.topRightCorner<3, 3>() * R.transpose();
    const Mat3 D = R * I.bottomRightCorner<3, 3>() * R.transpose();
    const Mat3 PD = hat_times(C.r, D);
    const Mat3 PBt = hat_times(C.r, B.transpose());     // -B P = (P B^T)^T
    const Mat3 PDP = -hat_times(C.r, PD.transpose());   // P D P = -P (P D)^T
    Mat6 out;
    out.topLeftCorner<3, 3>() = A + PBt + PBt.transpose() - PDP;
    out.topRightCorner<3, 3>() = B + PD;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = D;
    return out;
  }
  // The same for a rigid-body inertia (m, h, I): rotated (R h, R I R^T), then taken about the
  // parent origin, which is at -r from the child's (shifted_inertia).
  LIEMBS_STRONG_INLINE RigidInertia congruence(const RigidInertia& I) const { return congruence(C, I); }
  // The same for any pose, without making an Adjoint (a copy of C).
  LIEMBS_STRONG_INLINE static RigidInertia congruence(const Pose& C, const RigidInertia& I) {
    return shifted_inertia(I.m, C.R * I.h, rotate_symmetric(C.R, I.I), C.r);
  }
};

struct Identity {
  LIEMBS_STRONG_INLINE const Vec6& apply(const Vec6& V) const { return V; }
  LIEMBS_STRONG_INLINE void add_transpose_to(const Vec6& W, Vec6& target) const { target += W; }
  LIEMBS_STRONG_INLINE const Mat6& congruence(const Mat6& I) const { return I; }
  LIEMBS_STRONG_INLINE const RigidInertia& congruence(const RigidInertia& I) const { return I; }
};

// Ad_(1, r) = [[1, 0], [r~, 1]]: the same motion seen from a point shifted by -r.
struct PointShift {
  Vec3 r = Vec3::Zero();

  // In scalars, written as pairs (types.hpp, "Pairs").
  LIEMBS_STRONG_INLINE Vec6 apply(const Vec6& V) const {
    const double w0 = V(0), w1 = V(1), w2 = V(2);
    return pairs(w0, w1, w2, V(3) + (r(1) * w2 - r(2) * w1), V(4) + (r(2) * w0 - r(0) * w2), V(5) + (r(0) * w1 - r(1) * w0));
  }
  // T^T W = (W_angular - r x W_linear, W_linear).
  LIEMBS_STRONG_INLINE void add_transpose_to(const Vec6& W, Vec6& target) const {
    const double f0 = W(3), f1 = W(4), f2 = W(5);
    add_to_pair(target, 0, W(0) - (r(1) * f2 - r(2) * f1), W(1) - (r(2) * f0 - r(0) * f2));
    add_to_pair(target, 2, W(2) - (r(0) * f1 - r(1) * f0), f0);
    add_to_pair(target, 4, f1, f2);
  }
  // [[1, 0], [P, 1]]^T I [[1, 0], [P, 1]], P = r~: A + B P - P B^T - P D P, B - P D, D.
  LIEMBS_STRONG_INLINE Mat6 congruence(const Mat6& I) const {
    const Mat3 B = I.topRightCorner<3, 3>(), D = I.bottomRightCorner<3, 3>();
    const Mat3 PD = hat_times(r, D);
    const Mat3 PBt = hat_times(r, B.transpose());     // B P = -(P B^T)^T
    const Mat3 PDP = -hat_times(r, PD.transpose());   // P D P = -P (P D)^T
    Mat6 out;
    out.topLeftCorner<3, 3>() = I.topLeftCorner<3, 3>() - PBt.transpose() - PBt - PDP;
    out.topRightCorner<3, 3>() = B - PD;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = D;
    return out;
  }
  // The same for a rigid-body inertia: the Adjoint's with R = 1 and -r (shifted_inertia).
  LIEMBS_STRONG_INLINE RigidInertia congruence(const RigidInertia& I) const { return shifted_inertia(I.m, I.h, I.I, -r); }
};

// [[Q, 0], [r~ Rp, 1]]: angular part rotated by Q, linear part shifted by r x (Rp omega).
// Q = R_child^T R_parent is the transpose of the joint's rotation and Rp the parent's world
// rotation; both are read where the kernel keeps them (the joint pose, the parent's world
// pose) instead of copied into every node's transform.
struct RotateAndShift {
  const Mat3* joint_rotation = nullptr;  // R_parent^T R_child = Q^T
  const Mat3* parent_rotation = nullptr;  // R_parent
  Vec3 r = Vec3::Zero();                 // r_parent - r_child

  LIEMBS_STRONG_INLINE auto Q() const { return joint_rotation->transpose(); }
  LIEMBS_STRONG_INLINE const Mat3& Rp() const { return *parent_rotation; }

  // In scalars, written as pairs (types.hpp, "Pairs").
  LIEMBS_STRONG_INLINE Vec6 apply(const Vec6& V) const {
    const Vec3 w = V.head<3>();
    const Vec3 a = Q() * w, o = Rp() * w;
    return pairs(a(0), a(1), a(2), V(3) + (r(1) * o(2) - r(2) * o(1)), V(4) + (r(2) * o(0) - r(0) * o(2)),
                 V(5) + (r(0) * o(1) - r(1) * o(0)));
  }
  // T^T W = (Q^T m - Rp^T (r x f), f).
  LIEMBS_STRONG_INLINE Vec6 apply_transpose(const Vec6& W) const {
    const double f0 = W(3), f1 = W(4), f2 = W(5);
    const Vec3 m = *joint_rotation * W.head<3>() - Rp().transpose() * Vec3(r(1) * f2 - r(2) * f1, r(2) * f0 - r(0) * f2, r(0) * f1 - r(1) * f0);
    return pairs(m(0), m(1), m(2), f0, f1, f2);
  }
  LIEMBS_STRONG_INLINE void add_transpose_to(const Vec6& W, Vec6& target) const { target += apply_transpose(W); }
  // T = [[Q, 0], [K, 1]] with K = r~ Rp, for a symmetric I = [[A, B], [B^T, D]]:
  // [[Q^T A Q + X + X^T + K^T D K, Q^T B + K^T D], [., D]] with X = Q^T B K; K^T D = (D K)^T.
  LIEMBS_STRONG_INLINE Mat6 congruence(const Mat6& I) const {
    const Mat3 K = hat_times(r, Rp());
    const Mat3 Q = this->Q();
    const Mat3 A = I.topLeftCorner<3, 3>(), B = I.topRightCorner<3, 3>(), D = I.bottomRightCorner<3, 3>();
    const Mat3 DK = D * K, QtB = Q.transpose() * B, QtA = Q.transpose() * A;
    const Mat3 X = QtB * K;
    Mat6 out;
    out.topLeftCorner<3, 3>() = QtA * Q + X + X.transpose() + K.transpose() * DK;
    out.topRightCorner<3, 3>() = QtB + DK.transpose();
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = D;
    return out;
  }
};

}  // namespace liembs::twist_transforms
