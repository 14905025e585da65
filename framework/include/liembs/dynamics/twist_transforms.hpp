#pragma once
// Linear maps T that carry a twist from a parent node's representation to a child node's,
// V_child = T V_parent, together with the dual map of wrenches (T^T) and the congruence of
// inertias (T^T I T). Each representation uses the cheapest structure its frames allow
// (000 section 5.6): a full SE(3) adjoint (body-fixed), the identity (spatial), a change of
// reference point (hybrid), or a rotation of the angular part plus a point change (mixed).
#include <liembs/lie/so3.hpp>
#include <liembs/lie/types.hpp>

namespace liembs::twist_transforms {

// Ad_(R, p) = [[R, 0], [p~ R, R]].
struct Adjoint {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();

  Vec6 apply(const Vec6& V) const {
    Vec6 out;
    out.head<3>() = R * V.head<3>();
    out.tail<3>() = R * V.tail<3>() + p.cross(out.head<3>());
    return out;
  }
  // Ad^T W = (R^T (m - p x f), R^T f)
  Vec6 apply_transpose(const Vec6& W) const {
    Vec6 out;
    out.head<3>() = R.transpose() * (W.head<3>() - p.cross(W.tail<3>()));
    out.tail<3>() = R.transpose() * W.tail<3>();
    return out;
  }
  // Ad^T I Ad, by blocks of I = [[A, B], [B^T, D]]
  Mat6 congruence(const Mat6& I) const {
    const Mat3 P = so3::hat(p);
    const Mat3 A = I.topLeftCorner<3, 3>(), B = I.topRightCorner<3, 3>(), D = I.bottomRightCorner<3, 3>();
    // Ad = [[1, 0], [P, 1]] diag(R, R): the point change first (as in PointShift), then
    // the rotation of every block.
    const Mat3 B2 = B - P * D;
    const Mat3 A2 = A + B * P - P * B.transpose() - P * D * P;  // P^T = -P
    Mat6 out;
    out.topLeftCorner<3, 3>() = R.transpose() * A2 * R;
    out.topRightCorner<3, 3>() = R.transpose() * B2 * R;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = R.transpose() * D * R;
    return out;
  }
};

struct Identity {
  Vec6 apply(const Vec6& V) const { return V; }
  Vec6 apply_transpose(const Vec6& W) const { return W; }
  Mat6 congruence(const Mat6& I) const { return I; }
};

// Ad_(1, r) = [[1, 0], [r~, 1]]: the same motion seen from a point shifted by -r.
struct PointShift {
  Vec3 r = Vec3::Zero();

  Vec6 apply(const Vec6& V) const {
    Vec6 out = V;
    out.tail<3>() += r.cross(V.head<3>());
    return out;
  }
  Vec6 apply_transpose(const Vec6& W) const {
    Vec6 out = W;
    out.head<3>() -= r.cross(W.tail<3>());
    return out;
  }
  Mat6 congruence(const Mat6& I) const {
    const Mat3 P = so3::hat(r);
    const Mat3 A = I.topLeftCorner<3, 3>(), B = I.topRightCorner<3, 3>(), D = I.bottomRightCorner<3, 3>();
    Mat6 out;
    out.topLeftCorner<3, 3>() = A + B * P - P * B.transpose() - P * D * P;
    out.topRightCorner<3, 3>() = B - P * D;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = D;
    return out;
  }
};

// [[Q, 0], [r~ Rp, 1]]: angular part rotated by Q, linear part shifted by r x (Rp omega).
struct RotateAndShift {
  Mat3 Q = Mat3::Identity();   // R_child^T R_parent
  Mat3 Rp = Mat3::Identity();  // R_parent
  Vec3 r = Vec3::Zero();       // r_parent - r_child

  Vec6 apply(const Vec6& V) const {
    Vec6 out;
    out.head<3>() = Q * V.head<3>();
    out.tail<3>() = V.tail<3>() + r.cross(Rp * V.head<3>());
    return out;
  }
  Vec6 apply_transpose(const Vec6& W) const {
    Vec6 out;
    out.head<3>() = Q.transpose() * W.head<3>() - Rp.transpose() * r.cross(W.tail<3>());
    out.tail<3>() = W.tail<3>();
    return out;
  }
  Mat6 congruence(const Mat6& I) const {
    // T = [[Q, 0], [K, 1]] with K = r~ Rp.
    const Mat3 K = so3::hat(r) * Rp;
    const Mat3 A = I.topLeftCorner<3, 3>(), B = I.topRightCorner<3, 3>(), D = I.bottomRightCorner<3, 3>();
    Mat6 out;
    out.topLeftCorner<3, 3>() = Q.transpose() * A * Q + Q.transpose() * B * K + K.transpose() * B.transpose() * Q +
                                K.transpose() * D * K;
    out.topRightCorner<3, 3>() = Q.transpose() * B + K.transpose() * D;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = D;
    return out;
  }
};

}  // namespace liembs::twist_transforms
