#pragma once
// The four twist representations of papers 000/001 as policies of the recursive
// algorithms. A policy says, for a node with world pose C_i = (R_i, r_i):
//   Transform     how twists go from the parent node's coordinates to the node's (T_i);
//                 transform_is_relative_pose: T_i is the adjoint of the joint pose itself
//   screw         the joint screw in the representation (S_i)
//   velocity_term the velocity-product part c_i of A_i = T_i A_parent + c_i + S_i q''_i
//                 (or twist_and_velocity_term: V_i and c_i together, where they share work)
//   inertia       the node's spatial inertia in the representation (M_i): constant
//                 (body-fixed), or node_inertia, built where it is used from the node pose:
//                 the 10 parameters of the rigid-body form [[I, h~], [-h~, m 1]] (hybrid)
//                 or a view applied in factors (spatial, mixed); never stored per node
//   bias_wrench   the velocity-product part b_i of the Newton-Euler wrench W_i = M_i A_i + b_i
//                 (newton_euler_wrench, if given, computes all of W_i in one pass)
//   composite...  CRBA's composite inertias, kept as 10-parameter rigid-body inertias in
//                 every representation: composite (a node's own), composite_to_parent
//                 (T^T I T), composite_times_screw (I S)
//   walk...       CRBA's off-diagonal entries M_ij = S_j . F_i, paired in the world frame
//                 (walk_screw S_j, composite_times_screw F_i), which is the base frame
//                 when the base floats (CRBA places it at the identity)
//   to_body       the matrix Phi with V = Phi V^b (twists), wrenches map by Phi^-T
//   body_twist    V^b = Phi^-1 V in closed form (optional: kinematics::body_twist_of
//                 solves with Phi's LU for a policy without it)
//   frame_rate_term  Phi' V^b, the part of A = Phi V^b' + Phi' V^b not carried by V^b'
// Gravity enters as the acceleration (0; -g) of the root (000 rule R3); every transform
// below maps (0; a) to (0; frame-rotated a), so the trick holds in all four.
#include <liembs/dynamics/kernel_types.hpp>
#include <liembs/dynamics/twist_transforms.hpp>
#include <liembs/lie/se3.hpp>

namespace liembs::representations {

// -ad_V^T h = (omega x L + v x p, omega x p) for a momentum h = (L, p): the velocity-product
// wrench of the body-fixed and spatial Newton-Euler equations (000 eqs. 39, 42).
// In scalars, written as pairs (types.hpp, "Pairs").
LIEMBS_STRONG_INLINE Vec6 momentum_rate_bias(const Vec6& V, const Vec6& h) {
  const double w0 = V(0), w1 = V(1), w2 = V(2), v0 = V(3), v1 = V(4), v2 = V(5);
  const double L0 = h(0), L1 = h(1), L2 = h(2), p0 = h(3), p1 = h(4), p2 = h(5);
  Vec6 b;
  set_pair(b, 0, (w1 * L2 - w2 * L1) + (v1 * p2 - v2 * p1), (w2 * L0 - w0 * L2) + (v2 * p0 - v0 * p2));
  set_pair(b, 2, (w0 * L1 - w1 * L0) + (v0 * p1 - v1 * p0), w1 * p2 - w2 * p1);
  set_pair(b, 4, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0);
  return b;
}

// A world pose's z axis (R's last column) and position r, read in the pairs compose_into
// wrote them in, (R02, R12), (R22, r0), (r1, r2) (types.hpp, "Pairs"): the screws and
// transforms are built right after the pose, and a load spanning two of those pairs would
// wait for both stores. Unused loads are dropped by the compiler.
struct ZAxisAndPosition {
  double z0, z1, z2, r0, r1, r2;
};
LIEMBS_STRONG_INLINE ZAxisAndPosition z_axis_and_position(const Pose& C) {
  ZAxisAndPosition out;
  load_pair(C.R.data() + 6, out.z0, out.z1);
  load_pair(C.R.data() + 8, out.z2, out.r0);
  load_pair(C.r.data() + 1, out.r1, out.r2);
  return out;
}
struct ZAxis {
  double z0, z1, z2;
};
LIEMBS_STRONG_INLINE ZAxis z_axis(const Pose& C) {
  const ZAxisAndPosition p = z_axis_and_position(C);
  return {p.z0, p.z1, p.z2};
}

// Ad_C X for an aligned screw X: (a R e_z; l R e_z + r x a R e_z) (000 eq. 71b).
LIEMBS_STRONG_INLINE Vec6 world_screw(const Pose& C, const AxialScrew& X) {
  const auto [z0, z1, z2, r0, r1, r2] = z_axis_and_position(C);
  const double a = X.angular, l = X.linear;
  return pairs(a * z0, a * z1, a * z2, l * z0 + a * (r1 * z2 - r2 * z1), l * z1 + a * (r2 * z0 - r0 * z2),
               l * z2 + a * (r0 * z1 - r1 * z0));
}

// r_parent - r_node.
LIEMBS_STRONG_INLINE Vec3 offset_to_parent(const Pose& parent, const Pose& node) {
  const ZAxisAndPosition p = z_axis_and_position(node);
  return Vec3(parent.r(0) - p.r0, parent.r(1) - p.r1, parent.r(2) - p.r2);
}

// A twist about the point r (world orientation) about the world origin: (w, v + r x w);
// a wrench the other way, (m + r x f, f).
LIEMBS_STRONG_INLINE Vec6 twist_about_origin(const Vec3& r, const Vec6& S) {
  return pairs(S(0), S(1), S(2), S(3) + (r(1) * S(2) - r(2) * S(1)), S(4) + (r(2) * S(0) - r(0) * S(2)),
               S(5) + (r(0) * S(1) - r(1) * S(0)));
}
LIEMBS_STRONG_INLINE Vec6 wrench_about_origin(const Vec3& r, const Vec6& W) {
  return pairs(W(0) + (r(1) * W(5) - r(2) * W(4)), W(1) + (r(2) * W(3) - r(0) * W(5)), W(2) + (r(0) * W(4) - r(1) * W(3)),
               W(3), W(4), W(5));
}

// CRBA's composites for a policy whose node inertias have rigid-body form (body-fixed,
// spatial, hybrid): the node's own is Self::inertia, they move by the transform's
// congruence, and the off-diagonal pairing uses the policy's own screws and wrenches
// (spatial, whose frame is the world's; body-fixed and hybrid override it).
template <class Self>
struct RigidComposites {
  LIEMBS_STRONG_INLINE static RigidInertia composite(const Pose& C, const RigidInertia& M_node) { return Self::inertia(C, M_node); }
  template <class Transform>
  LIEMBS_STRONG_INLINE static RigidInertia composite_to_parent(const Transform& T, const RigidInertia& I) { return T.congruence(I); }
  template <class Screw>
  LIEMBS_STRONG_INLINE static Vec6 composite_times_screw(const Pose&, const RigidInertia& I, const Screw& S, const Screw&) { return I * S; }
  static constexpr bool separate_walk_form = false;
  static constexpr bool elemental_crba = false;
};

// Body-fixed: V^b = (omega^b, R^T r'), frame of node i (000 section 4.1, eqs. 66-68).
struct BodyFixed : RigidComposites<BodyFixed> {
  static constexpr const char* name = "body-fixed";
  using Transform = twist_transforms::Adjoint;
  using Screw = AxialScrew;

  // The inertia of a node is constant and the recursion needs no world poses.
  static constexpr bool constant_inertia = true;
  static constexpr bool needs_world_pose = false;

  // T_i = Ad_{C_{i,parent}} = Ad_{C_{parent,i}^-1}: the kernel writes the joint pose
  // C_{parent,i} into T_i.C itself (no transform function).
  static constexpr bool transform_is_relative_pose = true;
  LIEMBS_STRONG_INLINE static const AxialScrew& screw(const Pose&, const AxialScrew& X) { return X; }
  // (67c): -q' ad_X V_i = [V_i, X q']
  LIEMBS_STRONG_INLINE static Vec6 velocity_term(const Pose&, const Pose&, const Vec6&, const Vec6& V, const AxialScrew& S, double qd) {
    return se3::bracket(V, AxialScrew{S.angular * qd, S.linear * qd});
  }
  LIEMBS_STRONG_INLINE static const RigidInertia& inertia(const Pose&, const RigidInertia& M_body) { return M_body; }
  // (68a): -ad_V^T M V
  template <class Inertia>
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose&, const Inertia& M, const Vec6& V) { return momentum_rate_bias(V, M * V); }
  LIEMBS_STRONG_INLINE static Mat6 to_body(const Pose&) { return Mat6::Identity(); }
  LIEMBS_STRONG_INLINE static Vec6 from_body(const Pose&, const Vec6& V_body) { return V_body; }
  LIEMBS_STRONG_INLINE static Vec6 body_twist(const Pose&, const Vec6& V) { return V; }
  LIEMBS_STRONG_INLINE static Vec6 wrench_from_body(const Pose&, const Vec6& W_body) { return W_body; }
  LIEMBS_STRONG_INLINE static Vec6 frame_rate_term(const Pose&, const Vec6&) { return Vec6::Zero(); }

  // CRBA's off-diagonal walk runs in the world frame: M_ij = S_j . F_i is a pairing of a
  // twist and a wrench, the same in any frame, so S^w_j . F^w with S^w_j = Ad_{C_j} S_j
  // and F^w = Ad_{C_i}^-T F_i. Walking F in node frames costs one SE(3) adjoint per
  // ancestor (O(n^2) on a chain, 1.8x spatial's walk on the 96-chain); in the world it
  // costs nothing, for one transform per node. The composites stay in node frames.
  // (Hybrid and mixed do the same.)
  // On a shallow tree (a floating base with limbs, a short arm) the walk in node frames is
  // the cheaper one when the frames are the Denavit-Hartenberg ones, whose transforms are
  // rotations about one axis and shifts along one: elemental_mass_matrix.hpp, chosen per
  // tree (ElementalMassMatrix::preferred).
  static constexpr bool separate_walk_form = true;
  static constexpr bool elemental_crba = true;
  LIEMBS_STRONG_INLINE static Vec6 walk_screw(const Pose& C, const AxialScrew& X) { return world_screw(C, X); }
  LIEMBS_STRONG_INLINE static Vec6 composite_times_screw(const Pose& C, const RigidInertia& I, const AxialScrew& S, const Vec6&) {
    return twist_transforms::Adjoint::wrench_to_parent(C, I * S);  // Ad_C^-T (I S)
  }
};

// A node inertia in spatial coordinates, Ad_C^-T M^b Ad_C^-1 (000 eq. 72a), applied in
// factors instead of formed: about the body's centre of mass p = r + R c, in world
// orientation, it is diag(R I_c R^T, m 1), so the momentum of a twist (w, v) is
// (R I_c R^T w + p x f, f) with f = m (v + w x p). That is 42 multiplications a product;
// forming the 10 world parameters costs about 100 and storing them per node.
struct SpatialInertia {
  const CentroidalInertia& body;
  const Mat3& R;
  Vec3 p;  // the centre of mass in the world frame

  SpatialInertia(const Pose& C, const CentroidalInertia& M) : body(M), R(C.R), p(C.r + C.R * M.c) {}
  LIEMBS_STRONG_INLINE Vec6 operator*(const Vec6& V) const {
    const double w0 = V(0), w1 = V(1), w2 = V(2), m = body.m;
    const double f0 = m * (V(3) + (w1 * p(2) - w2 * p(1))), f1 = m * (V(4) + (w2 * p(0) - w0 * p(2))),
                 f2 = m * (V(5) + (w0 * p(1) - w1 * p(0)));
    const Vec3 L = R * (body.I * (R.transpose() * V.head<3>()));
    return pairs(L(0) + (p(1) * f2 - p(2) * f1), L(1) + (p(2) * f0 - p(0) * f2), L(2) + (p(0) * f1 - p(1) * f0), f0, f1, f2);
  }
  // The 10 world parameters: h = m p, I = R I_c R^T + m (p.p 1 - p p^T).
  RigidInertia rigid() const {
    return shifted_inertia(body.m, Vec3::Zero(), rotate_symmetric(R, body.I), p);
  }
};
LIEMBS_STRONG_INLINE Mat6 as_matrix(const SpatialInertia& M) { return M.rigid().matrix(); }

// Spatial: V^s = Ad_C V^b, all quantities in the world frame (000 section 4.2, eqs. 69-72).
struct Spatial : RigidComposites<Spatial> {
  static constexpr const char* name = "spatial";
  using Transform = twist_transforms::Identity;
  using Screw = Vec6;
  static constexpr bool constant_inertia = false;
  static constexpr bool needs_world_pose = true;
  static constexpr bool transform_is_relative_pose = false;

  LIEMBS_STRONG_INLINE static Transform transform(const Pose&, const Pose&, const Pose&) { return {}; }
  // J^s_i = Ad_C X (71b)
  LIEMBS_STRONG_INLINE static Vec6 screw(const Pose& C, const AxialScrew& X) { return world_screw(C, X); }
  // (71d): ad_{V_parent} V_i = ad_{V_parent} S q'
  LIEMBS_STRONG_INLINE static Vec6 velocity_term(const Pose&, const Pose&, const Vec6& V_parent, const Vec6&, const Vec6& S, double qd) {
    return se3::bracket(V_parent, S) * qd;
  }
  // (72a) Ad_C^-T M^b Ad_C^-1 as 10 parameters: h and I rotated, the reference point moved
  // to the world origin (CRBA's composites, the floating base), or as a view (the nodes).
  LIEMBS_STRONG_INLINE static RigidInertia inertia(const Pose& C, const RigidInertia& M_body) {
    return twist_transforms::Adjoint::congruence(C, M_body);
  }
  LIEMBS_STRONG_INLINE static SpatialInertia node_inertia(const Pose& C, const RigidInertia&, const CentroidalInertia& M_centroidal) {
    return {C, M_centroidal};
  }
  template <class Inertia>
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose&, const Inertia& M, const Vec6& V) { return momentum_rate_bias(V, M * V); }  // (72b)
  LIEMBS_STRONG_INLINE static Mat6 to_body(const Pose& C) { return se3::Ad(C); }
  LIEMBS_STRONG_INLINE static Vec6 from_body(const Pose& C, const Vec6& V_body) {
    Vec6 V;
    V.head<3>().noalias() = C.R * V_body.head<3>();
    V.tail<3>().noalias() = C.R * V_body.tail<3>();
    V.tail<3>() += C.r.cross(V.head<3>());
    return V;
  }
  // Ad_C^-1 V = (R^T omega^s, R^T (v^s - r x omega^s))
  LIEMBS_STRONG_INLINE static Vec6 body_twist(const Pose& C, const Vec6& V) {
    Vec6 V_body;
    V_body.head<3>().noalias() = C.R.transpose() * V.head<3>();
    V_body.tail<3>().noalias() = C.R.transpose() * (V.tail<3>() - C.r.cross(V.head<3>()));
    return V_body;
  }
  LIEMBS_STRONG_INLINE static Vec6 wrench_from_body(const Pose& C, const Vec6& W_body) { return se3::Ad_inverse(C).transpose() * W_body; }
  LIEMBS_STRONG_INLINE static Vec6 frame_rate_term(const Pose&, const Vec6&) { return Vec6::Zero(); }  // Ad_C ad_V V = 0
};

// Hybrid: V^h = (omega^s, r') = Ad_R V^b, measured at the node origin, resolved in the world
// frame (000 section 4.3, eqs. 73-77).
struct Hybrid : RigidComposites<Hybrid> {
  static constexpr const char* name = "hybrid";
  using Transform = twist_transforms::PointShift;
  using Screw = Vec6;
  static constexpr bool constant_inertia = false;
  static constexpr bool needs_world_pose = true;
  static constexpr bool transform_is_relative_pose = false;

  // T_i = Ad_{r_{i,parent}}, r_{i,parent} = r_parent - r_i
  LIEMBS_STRONG_INLINE static Transform transform(const Pose& parent, const Pose& node, const Pose&) { return {offset_to_parent(parent, node)}; }
  LIEMBS_STRONG_INLINE static Vec6 screw(const Pose& C, const AxialScrew& X) {  // ^0X_i^i (76b)
    const auto [z0, z1, z2] = z_axis(C);
    const double a = X.angular, l = X.linear;
    return pairs(a * z0, a * z1, a * z2, l * z0, l * z1, l * z2);
  }
  // (76d): (0; (r'_parent - r'_i) x omega_parent) + ad_{omega_i} S q'
  LIEMBS_STRONG_INLINE static Vec6 velocity_term(const Pose&, const Pose&, const Vec6& V_parent, const Vec6& V, const Vec6& S, double qd) {
    const double w0 = V(0), w1 = V(1), w2 = V(2), p0 = V_parent(0), p1 = V_parent(1), p2 = V_parent(2);
    const double d0 = V_parent(3) - V(3), d1 = V_parent(4) - V(4), d2 = V_parent(5) - V(5);
    const double s0 = S(0) * qd, s1 = S(1) * qd, s2 = S(2) * qd, t0 = S(3) * qd, t1 = S(4) * qd, t2 = S(5) * qd;
    return pairs(w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0, (d1 * p2 - d2 * p1) + (w1 * t2 - w2 * t1),
                 (d2 * p0 - d0 * p2) + (w2 * t0 - w0 * t2), (d0 * p1 - d1 * p0) + (w0 * t1 - w1 * t0));
  }
  // (77a) Ad_R M Ad_R^T: h and I rotated; formed where it is used (node_inertia)
  LIEMBS_STRONG_INLINE static RigidInertia node_inertia(const Pose& C, const RigidInertia& M_body, const CentroidalInertia&) {
    return inertia(C, M_body);
  }
  LIEMBS_STRONG_INLINE static RigidInertia inertia(const Pose& C, const RigidInertia& M_body) {
    RigidInertia M;
    M.m = M_body.m;
    M.h.noalias() = C.R * M_body.h;
    M.I = rotate_symmetric(C.R, M_body.I);
    return M;
  }
  // (77b): ad_{omega} M (omega; 0), ad_{(omega;0)} = diag(omega~, omega~)
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose&, const Mat6& M, const Vec6& V) {
    const Vec3 w = V.head<3>();
    const Vec3 L = M.topLeftCorner<3, 3>() * w, p = M.bottomLeftCorner<3, 3>() * w;
    Vec6 b;
    b << w.cross(L), w.cross(p);
    return b;
  }
  // The same with M = [[I, h~], [-h~, m 1]]: L = I w, p = -h x w.
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose&, const RigidInertia& M, const Vec6& V) {
    const Vec3 w = V.head<3>();
    const Vec3 L = M.I * w, p = w.cross(M.h);
    return pairs(w(1) * L(2) - w(2) * L(1), w(2) * L(0) - w(0) * L(2), w(0) * L(1) - w(1) * L(0),
                 w(1) * p(2) - w(2) * p(1), w(2) * p(0) - w(0) * p(2), w(0) * p(1) - w(1) * p(0));
  }
  LIEMBS_STRONG_INLINE static Mat6 to_body(const Pose& C) {
    Mat6 Phi = Mat6::Zero();
    Phi.topLeftCorner<3, 3>() = C.R;
    Phi.bottomRightCorner<3, 3>() = C.R;
    return Phi;
  }
  LIEMBS_STRONG_INLINE static Vec6 from_body(const Pose& C, const Vec6& V_body) {
    Vec6 V;
    V << C.R * V_body.head<3>(), C.R * V_body.tail<3>();
    return V;
  }
  LIEMBS_STRONG_INLINE static Vec6 body_twist(const Pose& C, const Vec6& V) {  // Ad_R^-1 = Ad_R^T
    Vec6 V_body;
    V_body << C.R.transpose() * V.head<3>(), C.R.transpose() * V.tail<3>();
    return V_body;
  }
  LIEMBS_STRONG_INLINE static Vec6 wrench_from_body(const Pose& C, const Vec6& W_body) { return from_body(C, W_body); }  // Ad_R^-T = Ad_R
  // d/dt(Ad_R) V^b = (0; omega^s x r')  (000 section 2.4)
  LIEMBS_STRONG_INLINE static Vec6 frame_rate_term(const Pose& C, const Vec6& V_body) {
    Vec6 c;
    c << Vec3::Zero(), (C.R * V_body.head<3>()).cross(C.R * V_body.tail<3>());
    return c;
  }
  // CRBA's walk in the world frame (see BodyFixed): a hybrid screw or wrench is about the
  // node origin r in world orientation, so one point shift takes it to the world origin.
  static constexpr bool separate_walk_form = true;
  LIEMBS_STRONG_INLINE static Vec6 walk_screw(const Pose& C, const Vec6& S) { return twist_about_origin(C.r, S); }
  LIEMBS_STRONG_INLINE static Vec6 composite_times_screw(const Pose& C, const RigidInertia& I, const Vec6& S, const Vec6&) {
    return wrench_about_origin(C.r, I * S);
  }

};

// A node inertia in mixed coordinates, diag(1, R) M^b diag(1, R^T) = [[I, h~ R^T], [R h~^T, m 1]]
// for the body inertia M^b = [[I, h~], [-h~, m 1]] and the node orientation R: a view of the
// two, whose product with a twist (w, v) is (I w + h x R^T v, R (w x h) + m v).
struct MixedInertia {
  const RigidInertia& body;
  const Mat3& R;

  LIEMBS_STRONG_INLINE Vec6 operator*(const Vec6& V) const {
    const Vec3 w = V.head<3>();
    const Vec3 u = R.transpose() * V.tail<3>(), L = body.I * w + body.h.cross(u), p = R * w.cross(body.h);
    const double m = body.m;
    return pairs(L(0), L(1), L(2), p(0) + m * V(3), p(1) + m * V(4), p(2) + m * V(5));
  }
  Mat6 matrix() const {
    Mat6 M;
    M.topLeftCorner<3, 3>() = body.I;
    M.topRightCorner<3, 3>() = twist_transforms::hat_times(body.h, R.transpose());
    M.bottomLeftCorner<3, 3>() = M.topRightCorner<3, 3>().transpose();
    M.bottomRightCorner<3, 3>() = body.m * Mat3::Identity();
    return M;
  }
};
LIEMBS_STRONG_INLINE Mat6 as_matrix(const MixedInertia& M) { return M.matrix(); }

// Mixed: V^m = (omega^b, r') = diag(R^T, 1) V^h (000 sections 3.4, 5.4 [derived]); the
// hybrid algorithm conjugated by P_i = diag(R_i^T, 1).
struct Mixed {
  static constexpr const char* name = "mixed";
  using Transform = twist_transforms::RotateAndShift;
  using Screw = Vec6;
  static constexpr bool constant_inertia = false;
  static constexpr bool needs_world_pose = true;
  static constexpr bool transform_is_relative_pose = false;

  // Points at the joint's and the parent's rotations: the kernel keeps both poses for as long
  // as the node's transform.
  LIEMBS_STRONG_INLINE static Transform transform(const Pose& parent, const Pose& node, const Pose& relative) {
    return {&relative.R, &parent.R, offset_to_parent(parent, node)};
  }
  LIEMBS_STRONG_INLINE static Vec6 screw(const Pose& C, const AxialScrew& X) {
    const auto [z0, z1, z2] = z_axis(C);
    const double l = X.linear;
    return pairs(0.0, 0.0, X.angular, l * z0, l * z1, l * z2);
  }
  // The twist V_i = T_i V_parent + S_i q' and the velocity term c_i together: P_i times the
  // hybrid term, ((omega^b x xi) q'; (r'_parent - r'_i) x omega^s_parent + omega^s x R eta q'),
  // with omega^s_parent = R_parent omega^b_parent taken from the transform's product and
  // omega^s = omega^s_parent + R e_z xi q' (the joint turns about the node's z axis).
  LIEMBS_STRONG_INLINE static void twist_and_velocity_term(const Transform& T, const Pose& node, const Vec6& V_parent, const Vec6& S,
                                                           double qd, Vec6& V, Vec6& c) {
    const Vec3 w_parent = V_parent.head<3>();
    const Vec3 a = T.Q() * w_parent, o = T.Rp() * w_parent;  // omega^b without the joint's; omega^s_parent
    const double s = S(2) * qd, t0 = S(3) * qd, t1 = S(4) * qd, t2 = S(5) * qd;
    const double w0 = a(0), w1 = a(1), w2 = a(2) + s;
    const Vec3& r = T.r;  // r_parent - r_i
    const double u0 = (r(1) * o(2) - r(2) * o(1)) + t0, u1 = (r(2) * o(0) - r(0) * o(2)) + t1,
                 u2 = (r(0) * o(1) - r(1) * o(0)) + t2;  // r'_i - r'_parent
    V = pairs(w0, w1, w2, V_parent(3) + u0, V_parent(4) + u1, V_parent(5) + u2);
    const auto [z0, z1, z2] = z_axis(node);
    const double n0 = o(0) + s * z0, n1 = o(1) + s * z1, n2 = o(2) + s * z2;  // omega^s
    c = pairs(w1 * s, -w0 * s, 0.0, (o(1) * u2 - o(2) * u1) + (n1 * t2 - n2 * t1), (o(2) * u0 - o(0) * u2) + (n2 * t0 - n0 * t2),
              (o(0) * u1 - o(1) * u0) + (n0 * t1 - n1 * t0));
  }
  LIEMBS_STRONG_INLINE static MixedInertia inertia(const Pose& C, const RigidInertia& M_body) { return {M_body, C.R}; }
  LIEMBS_STRONG_INLINE static MixedInertia node_inertia(const Pose& C, const RigidInertia& M_body, const CentroidalInertia&) {
    return inertia(C, M_body);
  }
  // A composite inertia in mixed coordinates is P^-T I^h P^-1 with I^h the hybrid one (a
  // rigid-body inertia) and P^-1 = diag(R, 1); and since T_i = P_i T^h_i P_parent^-1, the
  // congruence T^T (P_i^-T I^h P_i^-1) T = P_parent^-T (T^h^T I^h T^h) P_parent^-1. So the
  // composites are kept by their hybrid factor I^h (10 parameters) and P is applied where
  // a product is taken.
  LIEMBS_STRONG_INLINE static RigidInertia composite(const Pose& C, const RigidInertia& M_node) {
    return Hybrid::inertia(C, M_node);
  }
  LIEMBS_STRONG_INLINE static RigidInertia composite_to_parent(const Transform& T, const RigidInertia& I) {
    return twist_transforms::PointShift{T.r}.congruence(I);
  }
  // The walk runs in the world frame, as hybrid's (see BodyFixed): S^m_j . F^m_j =
  // (P_j^-1 S^m_j) . F^h_j = S^h_j . F^h_j with S^h = P^-1 S^m = (R S_angular; S_linear) and
  // F^h = I^h S^h, then both moved to the world origin.
  static constexpr bool separate_walk_form = true;
  static constexpr bool elemental_crba = false;
  LIEMBS_STRONG_INLINE static Vec6 hybrid_screw(const Pose& C, const Vec6& S) {
    const Vec3 a = C.R * S.head<3>();
    return pairs(a(0), a(1), a(2), S(3), S(4), S(5));
  }
  LIEMBS_STRONG_INLINE static Vec6 walk_screw(const Pose& C, const Vec6& S) { return twist_about_origin(C.r, hybrid_screw(C, S)); }
  LIEMBS_STRONG_INLINE static Vec6 composite_times_screw(const Pose& C, const RigidInertia& I, const Vec6& S, const Vec6&) {
    return wrench_about_origin(C.r, I * hybrid_screw(C, S));
  }
  // P b^h = diag(omega^b~, omega^s~) M (omega^b; 0) = (w x I w, R (w x (w x h))), since
  // omega^s x R (w x h) = R (w x (w x h)) for omega^s = R w.
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose&, const MixedInertia& M, const Vec6& V) {
    const Vec3 w = V.head<3>();
    const Vec3 L = M.body.I * w, p = M.R * w.cross(w.cross(M.body.h));
    return pairs(w(1) * L(2) - w(2) * L(1), w(2) * L(0) - w(0) * L(2), w(0) * L(1) - w(1) * L(0), p(0), p(1), p(2));
  }
  // The Newton-Euler wrench M A + b in one pass, with one rotation by R for both linear parts:
  // (I alpha + h x R^T a + w x I w, R (alpha x h + w x (w x h)) + m a) for A = (alpha, a).
  LIEMBS_STRONG_INLINE static Vec6 newton_euler_wrench(const Pose&, const MixedInertia& M, const Vec6& A, const Vec6& V) {
    const Vec3 w = V.head<3>(), alpha = A.head<3>();
    const Vec3& h = M.body.h;
    const Vec3 L = M.body.I * w, u = M.R.transpose() * A.tail<3>();
    const Vec3 angular = M.body.I * alpha + h.cross(u) + w.cross(L);
    const Vec3 linear = M.R * (alpha.cross(h) + w.cross(w.cross(h)));
    const double m = M.body.m;
    return pairs(angular(0), angular(1), angular(2), linear(0) + m * A(3), linear(1) + m * A(4), linear(2) + m * A(5));
  }
  // The same for a 6x6 matrix (the floating base's root inertia).
  LIEMBS_STRONG_INLINE static Vec6 bias_wrench(const Pose& C, const Mat6& M, const Vec6& V) {
    const Vec3 w = V.head<3>();
    const Vec3 L = M.topLeftCorner<3, 3>() * w, p = M.bottomLeftCorner<3, 3>() * w, o = C.R * w;
    return pairs(w(1) * L(2) - w(2) * L(1), w(2) * L(0) - w(0) * L(2), w(0) * L(1) - w(1) * L(0),
                 o(1) * p(2) - o(2) * p(1), o(2) * p(0) - o(0) * p(2), o(0) * p(1) - o(1) * p(0));
  }
  LIEMBS_STRONG_INLINE static Mat6 to_body(const Pose& C) {
    Mat6 Phi = Mat6::Identity();
    Phi.bottomRightCorner<3, 3>() = C.R;
    return Phi;
  }
  LIEMBS_STRONG_INLINE static Vec6 from_body(const Pose& C, const Vec6& V_body) {
    Vec6 V;
    V << V_body.head<3>(), C.R * V_body.tail<3>();
    return V;
  }
  LIEMBS_STRONG_INLINE static Vec6 body_twist(const Pose& C, const Vec6& V) {
    Vec6 V_body;
    V_body << V.head<3>(), C.R.transpose() * V.tail<3>();
    return V_body;
  }
  LIEMBS_STRONG_INLINE static Vec6 wrench_from_body(const Pose& C, const Vec6& W_body) { return from_body(C, W_body); }  // orthogonal Phi
  LIEMBS_STRONG_INLINE static Vec6 frame_rate_term(const Pose& C, const Vec6& V_body) { return Hybrid::frame_rate_term(C, V_body); }
};

}  // namespace liembs::representations
