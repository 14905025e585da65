#pragma once
// Analytic partial derivatives of the equations of motion of a tree (paper 000 section 6.1)
// and the inverse-dynamics regressor (000 section 6: the equations are linear in the
// inertial parameters), written once over a representation policy and instantiated by
// the representation plugins (representation_component.hpp): free functions over the const
// model (tree_model.hpp) and a DerivativeWorkspace. O(n d) like CRBA (d the
// depth), no finite differences, no automatic differentiation; per-node data in
// preallocated arrays; the only virtual call is the TreeDerivatives entry point.
//
// The derivative algebra runs in one inertial frame (spatial twists about its origin, 000
// section 4.2) whatever the representation: there a joint screw S_k moves with an ancestor
// joint j by the bracket dS_k/dq_j = [S_j, S_k] (000 eqs. 16, 21), a subtree moved by joint
// j carries its twists, wrenches and inertias along by ad (the "carried" part below), and
// composites add without transforms. The representation's recursion
// (joint_pose of tree_model.hpp) gives the joint poses; results and cost are the same in the
// four built-in representations. That frame ("world" below) is the world for a fixed base
// and, for a floating base, the world frame that coincides with the base frame at this
// instant: every formula is covariant (brackets commute with Ad, pairings are invariant),
// and there the base's screws Ad_C0 are the unit vectors, so its rows and columns need no
// transforms. Gravity is then (0, R_0^T a_g) and world-frame loads are turned by R_0^T.
//
// Algorithm (world frame, p the parent node, a_g = (0; -g) the root acceleration, 000 R3):
//   forward   V_i = V_p + S_i q'_i,   Psi_i = [V_i, S_i] (= S_i', 000 eq. 17)
//             A_i = A_p + S_i q''_i + Psi_i q'_i                          (000 eq. 18)
//             f_i = M_i A_i - ad_{V_i}^T M_i V_i - W_i^ext                  (000 eq. 72)
//             B_i = M_i ad_{V_i} + ad_{V_i}^T M_i + bar(M_i V_i)  (ad_X^T h = bar(h) X)
//   backward  subtree sums I^c_i, B^c_i, F_i (of f), L^c_i (world-frame loads, below)
//   with Phi_j = [A_j, S_j] + [V_j, Psi_j], for a row i in the subtree of column j:
//     dtau_i/dq_j  = S_i . (I^c_i Phi_j - B^c_i Psi_j - L^c_i S_j)
//     dtau_i/dq'_j = S_i . (2 I^c_i Psi_j - B^c_i S_j),      M_ij = S_i . I^c_i S_j
//   and for a row i strictly above column j, S_i . G_j and S_i . H_j with
//     G_j = -ad_{S_j}^T F_j + I^c_j Phi_j - B^c_j Psi_j - L^c_j S_j,  H_j = 2 I^c_j Psi_j - B^c_j S_j.
// Derivation: moving joint j by dq_j moves its subtree rigidly by S_j dq_j; all terms of
// A_l, V_l, f_l (l in the subtree) follow by ad except Phi_j + [Psi_j, V_l] and Psi_j,
// which enter f_l through M_l and its velocity coupling B_l; the carried parts of S_i and
// F_i cancel in S_i . F_i.
// Floating base: six columns along C_0 exp(xi) with S_0 = Ad_{C_0} (its columns, the unit
// vectors in the base frame) and u_0 the body twist. Under C_0 exp(xi) the whole tree, its velocities and u_0' are carried, and
// only gravity (and world-frame loads) stay: Phi_0 = [a_g, S_0], Psi_0 = 0; the base
// twist enters every A_l through the joints' Psi: Theta_0 = [V_0, S_0] in place of 2 Psi.
//
// World-frame loads (a pure moment m and a force f at a point x fixed in the body) are not
// carried: under a motion S = (w, v) their wrench (m + x * f, f) changes by the carried part
// plus L S, L = [[x~ f~ + m~, 0], [f~, 0]] (a load enters f_l with a minus sign).
//
// Forward dynamics: the first sweep runs at u' = 0 and gives the bias and M (from the
// composites), u' = M^-1 (tau - bias), the accelerations are then added to A_i and F_i, and
// du'/dx = -M^-1 dtau/dx. M is factored in tree order, M = L^T D L with L as sparse as M
// (Featherstone's LTDL, O(n d^2), tree_mass_factorization.hpp), and M^-1, dtau/dq and
// dtau/du, which all have the tree's sparsity, are solved as 3 nv right-hand sides: no
// dense Cholesky, no dense n^3 products.
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_model.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_mass_factorization.hpp>

#include <liembs/lie/se3.hpp>

#include <memory>
#include <span>
#include <vector>

namespace liembs {

namespace derivative_kernels {

// A 6x6 operator that reads only the angular part of a twist: X = (w, v) -> (Q w, c x w).
// The velocity coupling B (with c = 2 p, p the linear momentum) and the world-load term L
// (c = f) have this form. Sums of them stay of it, so composites are 12 numbers.
struct AngularOperator {
  Mat3 Q = Mat3::Zero();
  Vec3 c = Vec3::Zero();

  LIEMBS_STRONG_INLINE Vec6 operator*(const Vec6& X) const {
    const Vec3 w = X.head<3>();
    const Vec3 top = Q * w, bottom = c.cross(w);
    return pairs(top(0), top(1), top(2), bottom(0), bottom(1), bottom(2));
  }
  // (A^T Y) . X = Y . (A X): the 6-vector A^T Y, whose linear part is zero.
  LIEMBS_STRONG_INLINE Vec3 transpose_times(const Vec6& Y) const {
    return Q.transpose() * Y.head<3>() + Y.tail<3>().cross(c);
  }
  AngularOperator& operator+=(const AngularOperator& other) {
    Q += other.Q;
    c += other.c;
    return *this;
  }
};

// B = M ad_V + ad_V^T M + bar(M V) for a rigid-body inertia M = [[I, H], [-H, m 1]] (H = h~)
// and V = (w, v), with W = w~, U = v~ and the momentum (L, p) = M V. Its blocks are
// [[I W - W I + H U + U H + L~, [H, W] - m U + p~], [2 p~ - ..., 0]]; with p = m v - h x w
// the upper right block vanishes and the lower left is 2 p~ (so B reads only w).
// In entries: I W + (I W)^T = I W - W I is symmetric with (I W)_ij = (I_i x w)_j (I_i the
// rows of I), H U + (H U)^T = v h^T + h v^T - 2 (h.v) 1, and L~ is skew.
LIEMBS_STRONG_INLINE AngularOperator velocity_coupling(const RigidInertia& M, const Vec6& V, const Vec6& momentum) {
  const double v0 = V(3), v1 = V(4), v2 = V(5);
  const double h0 = M.h(0), h1 = M.h(1), h2 = M.h(2), L0 = momentum(0), L1 = momentum(1), L2 = momentum(2);
  const Mat3& I = M.I;
  const auto iw = [&](int i, int j) {  // (I W)_ij = (I_i x w)_j
    const int a = (j + 1) % 3, b = (j + 2) % 3;
    return I(i, a) * V(b) - I(i, b) * V(a);
  };
  const double hv = h0 * v0 + h1 * v1 + h2 * v2;
  const double s00 = 2.0 * (iw(0, 0) + h0 * v0 - hv), s11 = 2.0 * (iw(1, 1) + h1 * v1 - hv), s22 = 2.0 * (iw(2, 2) + h2 * v2 - hv);
  const double s01 = iw(0, 1) + iw(1, 0) + h0 * v1 + h1 * v0, s02 = iw(0, 2) + iw(2, 0) + h0 * v2 + h2 * v0,
               s12 = iw(1, 2) + iw(2, 1) + h1 * v2 + h2 * v1;
  AngularOperator B;
  B.Q << s00, s01 - L2, s02 + L1, s01 + L2, s11, s12 - L0, s02 - L1, s12 + L0, s22;
  B.c = 2.0 * momentum.tail<3>();
  return B;
}

// L of a world-frame load: moment m, force f at the world point x.
LIEMBS_STRONG_INLINE AngularOperator world_load_operator(const Vec3& moment, const Vec3& force, const Vec3& x) {
  AngularOperator L;
  L.Q = twist_transforms::hat_times(x, so3::hat(force)) + so3::hat(moment);
  L.c = force;
  return L;
}

// The body-frame Newton-Euler wrench as a linear map of the 10 inertial parameters
// (m, h = m c, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz about the origin): with the body twist
// (w, v), its rate (alpha, a) (gravity included) and abar = a + w x v,
//   moment = I alpha + w x I w + h x abar,   force = m abar + (alpha~ + w~ w~) h.
inline Eigen::Matrix<double, 6, kInertialParameters> body_regressor(const Vec6& V, const Vec6& A) {
  const Vec3 w = V.head<3>(), v = V.tail<3>(), alpha = A.head<3>();
  const Vec3 abar = A.tail<3>() + w.cross(v);
  const auto rotational = [](const Vec3& x) {  // I x = rotational(x) (I_xx, I_xy, I_xz, I_yy, I_yz, I_zz)
    Eigen::Matrix<double, 3, 6> out;
    out << x(0), x(1), x(2), 0.0, 0.0, 0.0, 0.0, x(0), 0.0, x(1), x(2), 0.0, 0.0, 0.0, x(0), 0.0, x(1), x(2);
    return out;
  };
  const Mat3 Wx = so3::hat(w);
  Eigen::Matrix<double, 6, kInertialParameters> Y = Eigen::Matrix<double, 6, kInertialParameters>::Zero();
  Y.block<3, 1>(3, 0) = abar;
  Y.block<3, 3>(0, 1) = -so3::hat(abar);
  Y.block<3, 3>(3, 1) = so3::hat(alpha) + Wx * Wx;
  Y.block<3, 6>(0, 4) = rotational(alpha) + Wx * rotational(w);
  return Y;
}

}  // namespace derivative_kernels

// What the derivative sweep writes (world frame, see the top of this file). The sweep does
// not depend on the representation: every representation's evaluator runs the same code.
struct DerivativeWorkspace {
  using AngularOperator = derivative_kernels::AngularOperator;

  explicit DerivativeWorkspace(const TreeModel& model) : factorization(model.nodes) {
    const auto n = static_cast<std::size_t>(model.nodes.dof());
    pose.resize(n);
    S.resize(n);
    V.resize(n);
    Psi.resize(n);
    A.resize(n);
    Phi.resize(n);
    F.resize(n);
    inertia.resize(n);
    composite.resize(n);
    coupling.resize(n);
    loads.resize(n);
    IS.resize(n);
    BS.resize(n);
    LS.resize(n);
    acceleration_increment.resize(n);
    force_increment.resize(n);
  }

  Mat3 world_rotation = Mat3::Identity();  // world to the frame of the algebra: R_0^T for a floating base
  Vec3 gravity = Vec3::Zero();             // the linear part of a_g in that frame
  Pose base_pose, relative;
  // Per node, world frame.
  std::vector<Pose> pose;
  std::vector<Vec6> S, V, Psi, A, Phi, F, IS, acceleration_increment, force_increment;
  std::vector<Vec3> BS, LS;
  std::vector<RigidInertia> inertia, composite;
  std::vector<AngularOperator> coupling, loads;
  // The floating base (root), in its own frame.
  Vec6 root_twist = Vec6::Zero(), root_acceleration = Vec6::Zero(), root_force = Vec6::Zero();
  RigidInertia root_inertia, root_composite;
  AngularOperator root_coupling, root_loads;
  // Forward dynamics.
  Eigen::VectorXd bias;
  Eigen::MatrixXd mass;
  RowMajorMatrix right_hand_sides;
  TreeMassFactorization factorization;
};

namespace derivatives {

using AngularOperator = derivative_kernels::AngularOperator;

// The model's constant loads leave the node wrenches (000 rule R2); world-frame loads also
// give their L (see the top of this file).
inline void subtract_loads(const TreeModel& m, DerivativeWorkspace& w) {
  for (const auto& load : m.nodes.loads) {
    const bool root = load.node < 0;
    const Pose& frame = root ? w.base_pose : w.pose[static_cast<std::size_t>(load.node)];
    Vec6& target = root ? w.root_force : w.F[static_cast<std::size_t>(load.node)];
    if (load.world_frame) {
      const Vec3 point = frame.R * load.point + frame.r;
      const Vec3 moment = w.world_rotation * load.wrench.head<3>(), force = w.world_rotation * load.wrench.tail<3>();
      target.head<3>() -= moment + point.cross(force);
      target.tail<3>() -= force;
      (root ? w.root_loads : w.loads[static_cast<std::size_t>(load.node)]) +=
          derivative_kernels::world_load_operator(moment, force, point);
    } else {
      target -= se3::Ad_inverse(frame).transpose() * load.wrench;  // Ad_C^-T W^b
    }
  }
}

// Poses, screws, twists, accelerations (u' given, else 0) and, with `dynamics`, the node
// inertias, Newton-Euler wrenches and velocity couplings, root first.
inline void forward_pass(const TreeModel& m, DerivativeWorkspace& w, const TreeState& state, const Eigen::VectorXd* acceleration, bool dynamics) {
  w.base_pose = Pose{};  // the frame of the algebra: the base's (see the top of this file)
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  w.world_rotation = m.nodes.floating_base ? Mat3(state.base.R.transpose()) : Mat3::Identity();
  w.gravity = -(w.world_rotation * m.nodes.gravity);
  w.root_twist.setZero();
  w.root_acceleration << 0.0, 0.0, 0.0, w.gravity;
  if (m.nodes.floating_base) {
    w.root_twist = state.base_twist;
    if (acceleration) w.root_acceleration += acceleration->head<6>();
    if (dynamics) {
      w.root_inertia = m.base_rigid;
      const Vec6 momentum = w.root_inertia * w.root_twist;
      w.root_force = w.root_inertia * w.root_acceleration + representations::momentum_rate_bias(w.root_twist, momentum);
      w.root_composite = w.root_inertia;
      w.root_coupling = derivative_kernels::velocity_coupling(w.root_inertia, w.root_twist, momentum);
      w.root_loads = AngularOperator{};
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const int p = m.nodes.parent[k];
    const auto parent = static_cast<std::size_t>(p);
    joint_pose(m, k, state.q(i), w.relative);
    se3::compose_into(p >= 0 ? w.pose[parent] : w.base_pose, w.relative, w.pose[k]);
    const Pose& pose = w.pose[k];
    w.S[k] = representations::world_screw(pose, m.aligned.axial[k]);
    const double qd = state.qd(i);
    w.V[k] = (p >= 0 ? w.V[parent] : w.root_twist) + w.S[k] * qd;
    w.Psi[k] = se3::bracket(w.V[k], w.S[k]);
    w.A[k] = (p >= 0 ? w.A[parent] : w.root_acceleration) + w.Psi[k] * qd;
    if (acceleration) w.A[k] += w.S[k] * (*acceleration)(offset + i);
    if (!dynamics) continue;
    w.inertia[k] = twist_transforms::Adjoint::congruence(pose, m.rigid[k]);
    const Vec6 momentum = w.inertia[k] * w.V[k];
    w.F[k] = w.inertia[k] * w.A[k] + representations::momentum_rate_bias(w.V[k], momentum);
    w.composite[k] = w.inertia[k];
    w.coupling[k] = derivative_kernels::velocity_coupling(w.inertia[k], w.V[k], momentum);
    if (m.world_loads) w.loads[k] = AngularOperator{};
  }
  if (dynamics) subtract_loads(m, w);
}

// Subtree sums, leaves first.
inline void backward_pass(const TreeModel& m, DerivativeWorkspace& w) {
  for (int i = m.nodes.dof() - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    const int p = m.nodes.parent[k];
    if (p >= 0) {
      const auto parent = static_cast<std::size_t>(p);
      w.composite[parent] += w.composite[k];
      w.coupling[parent] += w.coupling[k];
      w.F[parent] += w.F[k];
      if (m.world_loads) w.loads[parent] += w.loads[k];
    } else if (m.nodes.floating_base) {
      w.root_composite += w.composite[k];
      w.root_coupling += w.coupling[k];
      w.root_force += w.F[k];
      if (m.world_loads) w.root_loads += w.loads[k];
    }
  }
}

// tau_i = S_i . F_i; the base's body-frame wrench F_0.
inline void generalized_forces(const TreeModel& m, const DerivativeWorkspace& w, Eigen::VectorXd& force) {
  force.resize(m.nodes.velocity_dimension());
  const int offset = m.base_offset();
  for (int i = 0; i < m.nodes.dof(); ++i) force(offset + i) = w.S[static_cast<std::size_t>(i)].dot(w.F[static_cast<std::size_t>(i)]);
  if (m.nodes.floating_base) force.head<6>() = w.root_force;
}

// The column sweeps. Node k's row is paired with its own and its ancestors' columns and
// its column with its ancestors' rows (and the base's); a, b, H, G below are node k's
// factors I^c S, B^c^T S, 2 I^c Psi - B^c S and G (see the top of this file).
struct VelocityFactors {
  Vec6 a, H;
  Vec3 b;
};

// M_00 and dtau_0/du_0. With S_0 = 1 (the base frame) and Theta_0 = [V_0, S_0] = ad_{u_0}
// (u_0 the base's body twist): M_00 = I^c_0 and dtau_0/du_0 = I^c_0 Theta_0 - B^c_0 S_0 =
// M_00 ad_{u_0} - B^c_0.
template <class Matrix>
void velocity_base_block(const TreeModel& m, const DerivativeWorkspace& w, Matrix& by_u, Eigen::MatrixXd& mass) {
  if (!m.nodes.floating_base) return;
  const Mat6 base_mass = w.root_composite.matrix();
  mass.template topLeftCorner<6, 6>() = base_mass;
  Mat6 block;
  block.noalias() = base_mass * se3::ad(w.root_twist);
  block.topLeftCorner<3, 3>() -= w.root_coupling.Q;
  block.bottomLeftCorner<3, 3>() -= so3::hat(w.root_coupling.c);
  by_u.template topLeftCorner<6, 6>() = block;
}

// dtau_0/dxi. Phi_0 = [a_g, S_0] = ad_{a_g} with a_g = (0, g) in the base frame (gravity is
// purely linear): dtau_0/dxi = M_00 ad_{a_g} - L^c_0, whose right half is zero; with
// M_00 = [[I, h~], [-h~, m]] its left half is (h~ g~, m g~) less the loads' operator.
template <class Matrix>
void configuration_base_block(const TreeModel& m, const DerivativeWorkspace& w, Matrix& by_q) {
  if (!m.nodes.floating_base) return;
  const Mat3 gravity = so3::hat(w.gravity);
  Mat3 top = twist_transforms::hat_times(w.root_composite.h, gravity), bottom = w.root_composite.m * gravity;
  if (m.world_loads) {
    top -= w.root_loads.Q;
    bottom -= so3::hat(w.root_loads.c);
  }
  by_q.template block<3, 3>(0, 0) = top;
  by_q.template block<3, 3>(3, 0) = bottom;
}

LIEMBS_STRONG_INLINE VelocityFactors velocity_factors(const TreeModel&, const DerivativeWorkspace& w, std::size_t k) {
  const Vec6& S = w.S[k];
  VelocityFactors f;
  f.a = w.composite[k] * S;
  f.b = w.coupling[k].transpose_times(S);
  f.H = 2.0 * (w.composite[k] * w.Psi[k]) - w.coupling[k] * S;
  return f;
}

// G_k = -ad_{S_k}^T F_k + I^c_k Phi_k - B^c_k Psi_k - L^c_k S_k; also Phi_k and L^c_k^T S_k.
LIEMBS_STRONG_INLINE Vec6 configuration_factor(const TreeModel& m, DerivativeWorkspace& w, std::size_t k) {
  w.Phi[k] = se3::bracket(w.A[k], w.S[k]) + se3::bracket(w.V[k], w.Psi[k]);
  Vec6 G = representations::momentum_rate_bias(w.S[k], w.F[k]) + w.composite[k] * w.Phi[k] - w.coupling[k] * w.Psi[k];
  if (m.world_loads) {
    G -= w.loads[k] * w.S[k];
    w.LS[k] = w.loads[k].transpose_times(w.S[k]);
  }
  return G;
}

// dtau_i/dq_j for i in the subtree of j: I^c_i S_i . Phi_j - B^c_i^T S_i . Psi_j - L^c_i^T S_i . S_j.
LIEMBS_STRONG_INLINE double configuration_entry(const TreeModel& m, const DerivativeWorkspace& w, std::size_t i, const Vec6& a, const Vec3& b, std::size_t j) {
  double entry = a.dot(w.Phi[j]) - b.dot(w.Psi[j].head<3>());
  if (m.world_loads) entry -= w.LS[i].dot(w.S[j].head<3>());
  return entry;
}

// Node k's diagonal entries of M and dtau/du, and its base row and column.
template <class Matrix>
LIEMBS_STRONG_INLINE void velocity_entries(const TreeModel& m, const DerivativeWorkspace& w, int row, std::size_t k, const VelocityFactors& f, Matrix& by_u,
                                           Eigen::MatrixXd& mass) {
  const Vec6& S = w.S[k];
  mass(row, row) = f.a.dot(S);
  by_u(row, row) = 2.0 * f.a.dot(w.Psi[k]) - f.b.dot(S.head<3>());
  if (m.nodes.floating_base) {
    mass.block<1, 6>(row, 0) = f.a.transpose();
    mass.block<6, 1>(0, row) = f.a;
    // a^T ad_{V_0} - (b, 0)^T = (ad_{V_0}^T a - (b, 0))^T
    Vec6 coupled = -representations::momentum_rate_bias(w.root_twist, f.a);
    coupled.head<3>() -= f.b;
    by_u.template block<1, 6>(row, 0) = coupled.transpose();
    by_u.template block<6, 1>(0, row) = f.H;
  }
}

// Row `row` (node k) against the column of its ancestor c, and c's row against k's column.
template <class Matrix>
LIEMBS_STRONG_INLINE void velocity_pair(const TreeModel&, const DerivativeWorkspace& w, int row, int column, std::size_t c, const VelocityFactors& f, Matrix& by_u,
                                        Eigen::MatrixXd& mass) {
  const Vec6& S = w.S[c];
  mass(row, column) = mass(column, row) = f.a.dot(S);
  by_u(row, column) = 2.0 * f.a.dot(w.Psi[c]) - f.b.dot(S.head<3>());
  by_u(column, row) = S.dot(f.H);
}

template <class Matrix>
LIEMBS_STRONG_INLINE void configuration_entries(const TreeModel& m, const DerivativeWorkspace& w, int row, std::size_t k, const Vec6& a, const Vec3& b, const Vec6& G,
                                                Matrix& by_q) {
  by_q(row, row) = configuration_entry(m, w, k, a, b, k);
  if (m.nodes.floating_base) {
    // a^T ad_{a_g}: ad_{a_g}^T a = (a_v x g, 0) for the purely linear a_g (as is the world
    // loads' term, (L^T S, 0)).
    Vec3 moment = a.tail<3>().cross(w.gravity);
    if (m.world_loads) moment -= w.LS[k];
    by_q.template block<1, 3>(row, 0) = moment.transpose();
    by_q.template block<1, 3>(row, 3).setZero();
    by_q.template block<6, 1>(0, row) = G;
  }
}

template <class Matrix>
LIEMBS_STRONG_INLINE void configuration_pair(const TreeModel& m, const DerivativeWorkspace& w, int row, int column, std::size_t k, std::size_t c, const Vec6& a,
                                             const Vec3& b, const Vec6& G, Matrix& by_q) {
  by_q(row, column) = configuration_entry(m, w, k, a, b, c);
  by_q(column, row) = w.S[c].dot(G);
}

// M, dtau/du and dtau/dq at the current accelerations in one sweep over the nodes and their
// ancestors (inverse dynamics: each node's and ancestor's data read once).
inline void all_columns(const TreeModel& m, DerivativeWorkspace& w, InverseDynamicsDerivatives& out) {
  const int n = m.nodes.dof(), nv = m.nodes.velocity_dimension(), offset = m.base_offset();
  out.force_by_u.setZero(nv, nv);
  out.force_by_q.setZero(nv, nv);
  out.mass.setZero(nv, nv);
  velocity_base_block(m, w, out.force_by_u, out.mass);
  configuration_base_block(m, w, out.force_by_q);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const VelocityFactors f = velocity_factors(m, w, k);
    const Vec6 G = configuration_factor(m, w, k);
    const int row = offset + i;
    velocity_entries(m, w, row, k, f, out.force_by_u, out.mass);
    configuration_entries(m, w, row, k, f.a, f.b, G, out.force_by_q);
    for (const int j : m.ancestors(k)) {
      const auto c = static_cast<std::size_t>(j);
      velocity_pair(m, w, row, offset + j, c, f, out.force_by_u, out.mass);
      configuration_pair(m, w, row, offset + j, k, c, f.a, f.b, G, out.force_by_q);
    }
  }
}

// M and dtau/du alone (forward dynamics: they do not depend on u'), keeping I^c S and B^c^T S
// for configuration_columns. (by_u: a matrix or block of size nv x nv. Without `zero_mass`,
// the entries of M between unrelated velocities, which are zero, are left as they were.)
template <class Matrix>
void velocity_columns(const TreeModel& m, DerivativeWorkspace& w, Matrix& by_u, Eigen::MatrixXd& mass, bool zero_mass = true) {
  const int n = m.nodes.dof(), nv = m.nodes.velocity_dimension(), offset = m.base_offset();
  by_u.setZero();
  if (zero_mass) mass.setZero(nv, nv);
  else mass.resize(nv, nv);
  velocity_base_block(m, w, by_u, mass);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const VelocityFactors f = velocity_factors(m, w, k);
    w.IS[k] = f.a;
    w.BS[k] = f.b;
    const int row = offset + i;
    velocity_entries(m, w, row, k, f, by_u, mass);
    for (const int j : m.ancestors(k)) velocity_pair(m, w, row, offset + j, static_cast<std::size_t>(j), f, by_u, mass);
  }
}

// dtau/dq alone at the current accelerations (velocity_columns ran first); by_q nv x nv.
template <class Matrix>
void configuration_columns(const TreeModel& m, DerivativeWorkspace& w, Matrix& by_q) {
  const int n = m.nodes.dof(), offset = m.base_offset();
  by_q.setZero();
  configuration_base_block(m, w, by_q);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const Vec6 G = configuration_factor(m, w, k);
    const Vec6& a = w.IS[k];
    const Vec3& b = w.BS[k];
    const int row = offset + i;
    configuration_entries(m, w, row, k, a, b, G, by_q);
    for (const int j : m.ancestors(k)) configuration_pair(m, w, row, offset + j, k, static_cast<std::size_t>(j), a, b, G, by_q);
  }
}

// After a sweep at u' = 0: adds the accelerations' terms S_i q''_i (and Ad_C u_0') to A_i
// and M_l dA_l to the subtree wrenches F_i.
inline void add_accelerations(const TreeModel& m, DerivativeWorkspace& w, const Eigen::VectorXd& acceleration) {
  const int n = m.nodes.dof(), offset = m.base_offset();
  Vec6 root_increment = Vec6::Zero();
  if (m.nodes.floating_base) {
    root_increment = acceleration.head<6>();
    w.root_acceleration += root_increment;
    w.root_force += w.root_inertia * root_increment;
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const int p = m.nodes.parent[k];
    w.acceleration_increment[k] = (p >= 0 ? w.acceleration_increment[static_cast<std::size_t>(p)] : root_increment) +
                                 w.S[k] * acceleration(offset + i);
    w.A[k] += w.acceleration_increment[k];
    w.force_increment[k] = w.inertia[k] * w.acceleration_increment[k];
  }
  for (int i = n - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    w.F[k] += w.force_increment[k];
    const int p = m.nodes.parent[k];
    if (p >= 0) w.force_increment[static_cast<std::size_t>(p)] += w.force_increment[k];
    else if (m.nodes.floating_base) w.root_force += w.force_increment[k];
  }
}

inline void inverse_dynamics_derivatives(const TreeModel& m, DerivativeWorkspace& w, const TreeState& state, const Eigen::VectorXd& acceleration,
                                  InverseDynamicsDerivatives& out) {
  m.check_sizes(state, &acceleration, "acceleration");
  forward_pass(m, w, state, &acceleration, true);
  backward_pass(m, w);
  generalized_forces(m, w, out.force);
  all_columns(m, w, out);
}

inline void forward_dynamics_derivatives(const TreeModel& m, DerivativeWorkspace& w, const TreeState& state, const Eigen::VectorXd& force,
                                  ForwardDynamicsDerivatives& out) {
  m.check_sizes(state, &force, "force");
  forward_pass(m, w, state, nullptr, true);  // u' = 0: the bias
  backward_pass(m, w);
  generalized_forces(m, w, w.bias);
  // [M^-1 | dtau/dq | dtau/du] side by side, row-major, solved together with the
  // tree-order factorization of M (tree_mass_factorization.hpp): dtau/dq and dtau/du have
  // the tree's sparsity.
  const int nv = m.nodes.velocity_dimension();
  const Eigen::Index block = TreeMassFactorization::block_width(nv);  // (the padding stays zero)
  if (w.right_hand_sides.rows() != nv || w.right_hand_sides.cols() != 3 * block) w.right_hand_sides.setZero(nv, 3 * block);
  auto by_q = w.right_hand_sides.middleCols(block, nv);
  auto by_u = w.right_hand_sides.middleCols(2 * block, nv);
  velocity_columns(m, w, by_u, w.mass, false);  // (the factorization reads only related entries)
  w.factorization.factorize(w.mass);
  out.acceleration = force - w.bias;
  w.factorization.solve_in_place(out.acceleration);
  add_accelerations(m, w, out.acceleration);
  configuration_columns(m, w, by_q);
  w.factorization.inverse_and_solve_in_place(w.right_hand_sides);
  out.acceleration_by_force = w.right_hand_sides.leftCols(nv).selfadjointView<Eigen::Upper>();  // (its upper triangle)
  out.acceleration_by_q = -by_q;
  out.acceleration_by_u = -by_u;
}

inline void inverse_dynamics_regressor(const TreeModel& m, DerivativeWorkspace& w, const TreeState& state, const Eigen::VectorXd& acceleration,
                                Eigen::MatrixXd& regressor) {
  m.check_sizes(state, &acceleration, "acceleration");
  forward_pass(m, w, state, &acceleration, false);
  const std::size_t bodies = m.nodes.body_node.size();
  const int offset = m.base_offset();
  regressor.setZero(m.nodes.velocity_dimension(), static_cast<Eigen::Index>(bodies) * kInertialParameters);
  for (std::size_t b = 0; b < bodies; ++b) {
    const int node = m.nodes.body_node[b];
    if (node < 0 && !m.nodes.floating_base) continue;  // welded to the world: no force anywhere
    const auto k = static_cast<std::size_t>(node);
    const Pose body_pose = se3::compose(node >= 0 ? w.pose[k] : Pose{}, m.nodes.body_offset[b]);
    const Mat6 to_body = se3::Ad_inverse(body_pose);
    const Vec6 twist = to_body * (node >= 0 ? w.V[k] : w.root_twist);
    const Vec6 rate = to_body * (node >= 0 ? w.A[k] : w.root_acceleration);
    // The body's world wrench per parameter, Ad^-T Y_b, paired with every joint screw above it
    // (and the base's, the unit vectors).
    const Eigen::Matrix<double, 6, kInertialParameters> world =
        to_body.transpose() * derivative_kernels::body_regressor(twist, rate);
    const Eigen::Index column = static_cast<Eigen::Index>(b) * kInertialParameters;
    if (node >= 0) {
      regressor.block<1, kInertialParameters>(offset + node, column) = w.S[k].transpose() * world;
      for (const int j : m.ancestors(k))
        regressor.block<1, kInertialParameters>(offset + j, column) = w.S[static_cast<std::size_t>(j)].transpose() * world;
    }
    if (m.nodes.floating_base) regressor.block<6, kInertialParameters>(0, column) = world;
  }
}

}  // namespace derivatives

// The bound evaluator a representation plugin hands out (TreeDerivatives).
template <class Policy>
class RecursiveDerivatives final : public TreeDerivatives {
 public:
  explicit RecursiveDerivatives(std::shared_ptr<const KinematicTree> tree) : model_(std::move(tree)), workspace_(model_) {}

  std::string_view representation() const override { return Policy::name; }
  const KinematicTree& tree() const override { return model_.tree(); }

  void inverse_dynamics_derivatives(const TreeState& state, const Eigen::VectorXd& acceleration,
                                    InverseDynamicsDerivatives& out) override {
    derivatives::inverse_dynamics_derivatives(model_, workspace_, state, acceleration, out);
  }
  void forward_dynamics_derivatives(const TreeState& state, const Eigen::VectorXd& force,
                                    ForwardDynamicsDerivatives& out) override {
    derivatives::forward_dynamics_derivatives(model_, workspace_, state, force, out);
  }
  void inverse_dynamics_regressor(const TreeState& state, const Eigen::VectorXd& acceleration,
                                  Eigen::MatrixXd& regressor) override {
    derivatives::inverse_dynamics_regressor(model_, workspace_, state, acceleration, regressor);
  }

 private:
  const TreeModel model_;
  DerivativeWorkspace workspace_;
};

}  // namespace liembs
