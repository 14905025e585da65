#pragma once
// CRBA (000 section 6.1, Featherstone's composite-rigid-body algorithm) in body frames placed
// by the Denavit-Hartenberg rule, for shallow trees: the mass matrix of the body-fixed
// representation where the walk of each column to the root is short (a floating base with
// limbs, a short arm).
//
// Every node gets an elemental frame E_k on its joint axis (z), with its x axis on the
// common normal to the axis of its first child (Craig's modified DH rule, with Khalil and
// Kleinfinger's two extra parameters for the other children of a node and for the children
// of the root, whose frame is fixed). The pose of E_k in its parent's elemental frame is
// then a product of elemental motions,
//   P_k(q) = [Rz(gamma) Tz(b)] Rx(alpha) Tx(d) Rz(theta0 + a q) Tz(r0 + l q),
// and carrying an inertia or a wrench through P_k takes a few rotations about one axis and
// shifts along one axis: about 40 products for a composite inertia (a general congruence
// takes about 110 with the world pose it needs) and 20 for a wrench, and no world pose.
//
// The algorithm (000 eqs. 80-81, the composite inertias and the column walk):
//   I^c_k = I_k + sum over children c of P_c . I^c_c        (composites, leaves first)
//   F_i = I^c_i S_i;  M_ii = S_i . F_i;  then for each ancestor j of i, nearest first:
//   F_i <- P_{child}^-T F_i (the wrench seen from E_j);  M_ij = M_ji = S_j . F_i
// with S_j = (0, 0, a, 0, 0, l) in E_j. A node's column and its parent's walk together
// from the parent up, in the two lanes of a vector (a chain of 6 makes 3 such walks), so
// about half the steps are paid. With a floating base, the columns reaching the base frame
// are the base rows (the base at the identity, as in recursive_algorithms.hpp), and the
// base block is the composite of the whole tree.
//
// The walk costs one wrench transform per ancestor, so on a deep chain (O(n^2) transforms)
// the world-frame pairing of recursive_algorithms.hpp (one transform per node, a dot per
// ancestor) is faster: `preferred` says which one a tree should use.
#include <liembs/dynamics/kernel_types.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/sincos.hpp>

#include <vector>

namespace liembs {

// The 10 parameters of a rigid-body inertia about a frame origin, [[I, h~], [-h~, m 1]],
// as scalars (I symmetric: its 6 entries).
struct InertiaParameters {
  double m = 0.0, h0 = 0.0, h1 = 0.0, h2 = 0.0;
  double I00 = 0.0, I11 = 0.0, I22 = 0.0, I01 = 0.0, I02 = 0.0, I12 = 0.0;

  static InertiaParameters from(const RigidInertia& M);
  RigidInertia rigid() const;

  LIEMBS_STRONG_INLINE InertiaParameters operator+(const InertiaParameters& o) const {
    InertiaParameters sum = *this;
    return sum += o;
  }
  LIEMBS_STRONG_INLINE InertiaParameters& operator+=(const InertiaParameters& o) {
    m += o.m;
    h0 += o.h0, h1 += o.h1, h2 += o.h2;
    I00 += o.I00, I11 += o.I11, I22 += o.I22, I01 += o.I01, I02 += o.I02, I12 += o.I12;
    return *this;
  }
};

// A wrench (moment n about the frame origin, force f), as scalars, or as Lanes: two
// wrenches at once, one in each lane (types.hpp).
template <class T>
struct Wrench {
  T n0, n1, n2, f0, f1, f2;
};

// A rotation about one axis by an angle with cos c and sin s, and the double angle
// (c2, s2) = (cos 2t, sin 2t) its congruence uses.
struct AxisRotation {
  double c = 1.0, s = 0.0, c2 = 1.0, s2 = 0.0;
  LIEMBS_STRONG_INLINE static AxisRotation of(double c, double s) { return {c, s, c * c - s * s, 2.0 * c * s}; }
};

namespace elemental {

// The inertia of a body seen from a frame in which the body's frame is turned in the plane
// of axes (a, b), the third axis c fixed: (h_a, h_b) and (I_ac, I_bc) rotate, and the 2x2
// block by the double angle, with mean and half difference of its diagonal:
// I_aa' = mu + c2 delta - s2 I_ab, I_bb' = mu - c2 delta + s2 I_ab, I_ab' = s2 delta + c2 I_ab.
LIEMBS_STRONG_INLINE void rotate_in_plane(const AxisRotation& R, double& ha, double& hb, double& Iaa, double& Ibb,
                                          double& Iab, double& Iac, double& Ibc) {
  const double mu = 0.5 * (Iaa + Ibb), delta = 0.5 * (Iaa - Ibb);
  const double h = ha, I = Iac;
  ha = R.c * h - R.s * hb;
  hb = R.s * h + R.c * hb;
  Iaa = mu + (R.c2 * delta - R.s2 * Iab);
  Ibb = mu - (R.c2 * delta - R.s2 * Iab);
  Iab = R.s2 * delta + R.c2 * Iab;
  Iac = R.c * I - R.s * Ibc;
  Ibc = R.s * I + R.c * Ibc;
}
// h -> Rz h, I -> Rz I Rz^T; and about x.
LIEMBS_STRONG_INLINE void rotate_z(InertiaParameters& J, const AxisRotation& R) {
  rotate_in_plane(R, J.h0, J.h1, J.I00, J.I11, J.I01, J.I02, J.I12);
}
LIEMBS_STRONG_INLINE void rotate_x(InertiaParameters& J, const AxisRotation& R) {
  rotate_in_plane(R, J.h1, J.h2, J.I11, J.I22, J.I12, J.I01, J.I02);
}
// The inertia about a point t e_a below the origin (the body frame shifted by t along axis
// a; b and c the other two): shifted_inertia (kernel_types.hpp) with s = t e_a.
LIEMBS_STRONG_INLINE void shift_along(double m, double t, double& ha, double hb, double hc, double& Ibb, double& Icc,
                                      double& Iab, double& Iac) {
  const double d = t * (2.0 * ha + m * t);
  Ibb += d;
  Icc += d;
  Iab -= t * hb;
  Iac -= t * hc;
  ha += m * t;
}
LIEMBS_STRONG_INLINE void shift_z(InertiaParameters& J, double t) { shift_along(J.m, t, J.h2, J.h0, J.h1, J.I00, J.I11, J.I02, J.I12); }
LIEMBS_STRONG_INLINE void shift_x(InertiaParameters& J, double t) { shift_along(J.m, t, J.h0, J.h1, J.h2, J.I11, J.I22, J.I01, J.I02); }

}  // namespace elemental

// The constant part of a node's elemental pose, P_k(q) above.
struct ElementalJoint {
  bool prefix = false;  // gamma or b is not zero: Rz(gamma) Tz(b) is applied
  bool shifts = false;  // r0 + l q is not always zero: Tz(r0 + l q) is applied
  AxisRotation gamma, alpha;
  double b = 0.0, d = 0.0, theta0 = 0.0, r0 = 0.0;
  AxialScrew X;  // the joint screw (0, 0, a, 0, 0, l) in E_k
};

// The elemental frames of an aligned tree (kinematic_tree.hpp): per node its ElementalJoint,
// the pose Z_k = Rz(phi) Tz(delta) of E_k in the aligned node frame, and the node inertia in
// E_k. `usable` is false when some pair of axes is nearly but not exactly parallel (their
// common normal is ill-conditioned); such a tree keeps the world-frame CRBA.
struct ElementalFrames {
  bool usable = true;
  std::vector<ElementalJoint> joint;
  std::vector<Pose> frame;
  std::vector<InertiaParameters> inertia;
  InertiaParameters base;  // the floating base's, in its own frame
  // Wrench transforms the column walk makes (one per ancestor of every node, and to the
  // base when it floats), for choosing between this CRBA and the world-frame one.
  std::size_t walk_steps = 0;
};
ElementalFrames elemental_frames(const AlignedTree& aligned);

// The pose P_k(q) of E_k in its parent's elemental frame, as a Pose (for tests and checks;
// the kernel never forms it).
Pose elemental_pose(const ElementalJoint& joint, double q);

class ElementalMassMatrix {
 public:
  explicit ElementalMassMatrix(const AlignedTree& aligned);

  bool usable() const { return frames_.usable; }
  // Whether this CRBA should be used on the tree: usable, and walks short enough that their
  // transforms cost less than the world-frame CRBA's per-node transforms (the average walk
  // of a node at most `max_mean_walk` steps; measured in docs/benchmarks.md).
  bool preferred() const;
  static constexpr double max_mean_walk = 12.0;

  const ElementalFrames& frames() const { return frames_; }

  // M(q) into `mass`, already nv x nv (the base's 6 first with a floating base, placed at
  // the identity); every entry is written.
  void compute(const Eigen::VectorXd& q, Eigen::MatrixXd& mass);

 private:
  // The node's composite inertia seen from its parent's elemental frame.
  LIEMBS_STRONG_INLINE void to_parent(std::size_t k, InertiaParameters& J) const {
    const ElementalJoint& e = frames_.joint[k];
    if (e.shifts) elemental::shift_z(J, shift_[k]);
    elemental::rotate_z(J, rotation_[k]);
    elemental::shift_x(J, e.d);
    elemental::rotate_x(J, e.alpha);
    if (e.prefix) {
      elemental::shift_z(J, e.b);
      elemental::rotate_z(J, e.gamma);
    }
  }
  // A wrench (or two) in E_k seen from its parent's frame: n -> R n, f -> R f for a rotation,
  // n -> n + t x f for a shift t (t e_z x f = t (-f1, f0, 0), t e_x x f = t (0, -f2, f1)).
  template <class T>
  LIEMBS_STRONG_INLINE void to_parent(std::size_t k, Wrench<T>& W) const {
    const ElementalJoint& e = frames_.joint[k];
    if (e.shifts) {
      const double r = shift_[k];
      W.n0 -= r * W.f1;
      W.n1 += r * W.f0;
    }
    rotate_z(W, rotation_[k].c, rotation_[k].s);
    W.n1 -= e.d * W.f2;
    W.n2 += e.d * W.f1;
    const T n1 = W.n1, f1 = W.f1;  // Rx(alpha)
    W.n1 = e.alpha.c * n1 - e.alpha.s * W.n2;
    W.n2 = e.alpha.s * n1 + e.alpha.c * W.n2;
    W.f1 = e.alpha.c * f1 - e.alpha.s * W.f2;
    W.f2 = e.alpha.s * f1 + e.alpha.c * W.f2;
    if (e.prefix) {
      W.n0 -= e.b * W.f1;
      W.n1 += e.b * W.f0;
      rotate_z(W, e.gamma.c, e.gamma.s);
    }
  }
  template <class T>
  LIEMBS_STRONG_INLINE static void rotate_z(Wrench<T>& W, double c, double s) {
    const T n0 = W.n0, f0 = W.f0;
    W.n0 = c * n0 - s * W.n1;
    W.n1 = s * n0 + c * W.n1;
    W.f0 = c * f0 - s * W.f1;
    W.f1 = s * f0 + c * W.f1;
  }

  // A walk of the columns: `node`'s alone (parent -1), or `node`'s and its parent's together.
  struct Walk {
    int node, parent;
  };

  ElementalFrames frames_;
  std::vector<int> parent_;
  bool floating_base_ = false;
  std::vector<AxisRotation> rotation_;  // Rz(theta0 + a q) of the call
  std::vector<double> shift_;           // r0 + l q of the call
  std::vector<InertiaParameters> composite_;
  std::vector<int> level_order_;  // the nodes in breadth-first order
  std::vector<Walk> walks_;
  std::vector<bool> starts_parent_;  // per node: the first of its parent's children to be moved
  bool branched_ = false;            // some degrees of freedom are unrelated (zeros in M)
};

}  // namespace liembs
