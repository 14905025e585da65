#pragma once
// Paper 003's closed-form Lagrangian equations of motion (Proposition 1, eqs. 10-13, and the
// Coriolis matrix of Lemma 1, eq. 21), built
// literally from the stacked matrices of its Table 2, for the tests: N bodies (the floating
// base, if any, then one per tree node; massless intermediate nodes of multi-DoF joints
// included), spatial (world-frame) twists, the generalized velocity in the paper's
// coordinates nu = (spatial base twist V^s if floating, q'):
//   S    = blockdiag(1_6, S_2, ..., S_N)  (6N x nv), S_i = Ad_{C_i} X_i the joint's world screw
//   G_p  (6N x 6N): block (i, k) = 1_6 if k is i or an ancestor of i;  G_c = G_p^T
//   M    = blockdiag(M_i^0),  M_i^0 = Ad_{C_i}^-T M_i^b Ad_{C_i}^-1                       (60)
//   V    = G_p S nu,  Sdot = blockdiag(0_6, ad_{V_i} S_i),  ad_V = blockdiag(ad_{V_i})      (33)
//   Mbar = S^T G_c M G_p S                                                                  (11)
//   C    = S^T G_c M G_p Sdot - S^T G_c ad_V^T M G_p S                                      (21)
//   h    = C nu,  g = -S^T G_c M G_I (G_I = (0; g) per body),  tau_ext = -S^T G_c W_app^0    (12, 13)
// Poses come from closed_form::node_poses (products of exponentials, no recursion).
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/se3.hpp>

#include <vector>

namespace liembs::testing {

struct LagrangianClosedForm {
  Eigen::MatrixXd mass;           // Mbar
  Eigen::MatrixXd coriolis;       // C of Lemma 1
  Eigen::VectorXd gravity;        // g
  Eigen::VectorXd applied;        // tau_ext of (13), from the model's constant loads
  Eigen::VectorXd velocity;       // nu in the paper's coordinates
  // T: u (LieMBS, base body twist) -> nu (paper, base spatial twist), nu = T u; also
  // tau_LieMBS = T^T tau_paper (the base's body-frame wrench from its spatial wrench).
  Eigen::MatrixXd to_paper;
  // The stacked quantities of Table 2: S, G_p, M, V = G_p S nu, G_I, W_app^0.
  Eigen::MatrixXd S, Gp, M;
  Eigen::VectorXd V, G_I, W_app;
  bool floating = false;
};

inline LagrangianClosedForm lagrangian_closed_form(const KinematicTree& tree, const TreeState& state) {
  const int n = tree.dof(), nv = tree.velocity_dimension(), base = tree.floating_base ? 1 : 0, bodies = n + base;
  const std::vector<Pose> poses = closed_form::node_poses(tree, state);
  const Pose root = closed_form::root_pose(tree, state);
  // Body b: 0 the base (if floating), base + i node i.
  std::vector<Pose> pose(static_cast<std::size_t>(bodies));
  std::vector<Mat6> body_inertia(static_cast<std::size_t>(bodies));
  std::vector<int> parent(static_cast<std::size_t>(bodies), -1);
  if (base) {
    pose[0] = root;
    body_inertia[0] = tree.base_inertia;
  }
  for (int i = 0; i < n; ++i) {
    const auto b = static_cast<std::size_t>(base + i);
    pose[b] = poses[static_cast<std::size_t>(i)];
    body_inertia[b] = tree.inertia[static_cast<std::size_t>(i)];
    const int p = tree.parent[static_cast<std::size_t>(i)];
    parent[b] = p >= 0 ? base + p : (base ? 0 : -1);
  }
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(6 * bodies, nv), Gp = Eigen::MatrixXd::Zero(6 * bodies, 6 * bodies),
                  M = Eigen::MatrixXd::Zero(6 * bodies, 6 * bodies);
  if (base) S.topLeftCorner<6, 6>().setIdentity();
  for (int i = 0; i < n; ++i)
    S.block<6, 1>(6 * (base + i), nv - n + i) = se3::Ad(poses[static_cast<std::size_t>(i)]) * tree.screw[static_cast<std::size_t>(i)];
  for (int b = 0; b < bodies; ++b) {
    for (int a = b; a >= 0; a = parent[static_cast<std::size_t>(a)]) Gp.block<6, 6>(6 * b, 6 * a).setIdentity();
    const Mat6 inverse = se3::Ad_inverse(pose[static_cast<std::size_t>(b)]);
    M.block<6, 6>(6 * b, 6 * b) = inverse.transpose() * body_inertia[static_cast<std::size_t>(b)] * inverse;
  }
  LagrangianClosedForm out;
  out.to_paper = Eigen::MatrixXd::Identity(nv, nv);
  if (base) out.to_paper.topLeftCorner<6, 6>() = se3::Ad(root);
  out.velocity = out.to_paper * closed_form::generalized_velocity(tree, state);
  const Eigen::VectorXd V = Gp * S * out.velocity;
  Eigen::MatrixXd Sdot = Eigen::MatrixXd::Zero(6 * bodies, nv), adV_T = Eigen::MatrixXd::Zero(6 * bodies, 6 * bodies);
  for (int b = 0; b < bodies; ++b) {
    const Mat6 ad = se3::ad(V.segment<6>(6 * b));
    adV_T.block<6, 6>(6 * b, 6 * b) = ad.transpose();
    if (b >= base) Sdot.block(6 * b, 0, 6, nv) = ad * S.block(6 * b, 0, 6, nv);
  }
  const Eigen::MatrixXd Gc = Gp.transpose();
  out.mass = S.transpose() * Gc * M * Gp * S;
  out.coriolis = S.transpose() * Gc * M * Gp * Sdot - S.transpose() * Gc * adV_T * M * Gp * S;
  Eigen::VectorXd G_I = Eigen::VectorXd::Zero(6 * bodies), W_app = Eigen::VectorXd::Zero(6 * bodies);
  for (int b = 0; b < bodies; ++b) G_I.segment<3>(6 * b + 3) = tree.gravity;
  out.gravity = -S.transpose() * Gc * M * G_I;
  for (const auto& load : tree.loads) {
    const int b = load.node >= 0 ? base + load.node : 0;
    const Pose& frame = pose[static_cast<std::size_t>(b)];
    Vec6 spatial;
    if (load.world_frame) {
      const Vec3 x = se3::transform_point(frame, load.point);
      spatial << load.wrench.head<3>() + x.cross(load.wrench.tail<3>()), load.wrench.tail<3>();
    } else {
      spatial = se3::Ad_inverse(frame).transpose() * load.wrench;
    }
    W_app.segment<6>(6 * b) += spatial;
  }
  out.applied = -S.transpose() * Gc * W_app;
  out.S = S;
  out.Gp = Gp;
  out.M = M;
  out.V = V;
  out.G_I = G_I;
  out.W_app = W_app;
  out.floating = base == 1;
  return out;
}

// Block-diagonal ad_x of a stacked twist x (6N), and its transpose.
inline Eigen::MatrixXd stacked_ad(const Eigen::VectorXd& x) {
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(x.size(), x.size());
  for (Eigen::Index b = 0; b < x.size() / 6; ++b) out.block<6, 6>(6 * b, 6 * b) = se3::ad(x.segment<6>(6 * b));
  return out;
}

// The left side of the first-order closed form (14) in the paper's coordinates,
//   Mbar nu'' + hbar' + g' + tau_ext',
// with (16)-(19) as printed (constant body-frame loads, W^b' = 0; world-frame loads are
// not of the form (13) and must be absent):
//   hbar'    = S^T ad_V^T G_c Pi'_I + S^T (G_c Pi''_I - G_c M G_p S nu'')                    (16)
//   g'       = -S^T ad_V^T G_c M G_I + S^T G_c (M ad_V + ad_V^T M) G_I                       (17-18)
//   tau_ext' = S^T (G_c ad_V^T - ad_V^T G_c) W_app^0                                         (19)
// where Pi_I = M V per body and its derivatives by (61)-(62) with V' = G_p (S nu' + S' nu),
// V'' = G_p (S nu'' + 2 S' nu' + S'' nu), S' = ad_V S, S'' = ad_{V'} S + ad_V S' (Table 5).
// Table 2's S' has a zero base block, but (16)-(17) write S'^T as S^T ad_V^T, whose base
// block is ad_{V_1}^T (note section 4, "Caveat"): the base row is the body-frame wrench's
// rate mapped to the world, Ad_C^-T (W^b)', not (W^s)'.
inline Eigen::VectorXd first_order_closed_form(const LagrangianClosedForm& closed, const Eigen::VectorXd& nu_rate,
                                               const Eigen::VectorXd& nu_second_rate) {
  const Eigen::MatrixXd &S = closed.S, &Gp = closed.Gp, &M = closed.M;
  const Eigen::MatrixXd Gc = Gp.transpose();
  const Eigen::MatrixXd adV = stacked_ad(closed.V);
  Eigen::MatrixXd S_rate = adV * S;  // Table 2: S' = blockdiag(0, ad_{V_i} S_i)
  if (closed.floating) S_rate.topRows<6>().setZero();
  const Eigen::VectorXd V_rate = Gp * (S * nu_rate + S_rate * closed.velocity);
  const Eigen::MatrixXd adV_rate = stacked_ad(V_rate);
  Eigen::MatrixXd S_second_rate = adV_rate * S + adV * S_rate;
  if (closed.floating) S_second_rate.topRows<6>().setZero();
  const Eigen::VectorXd V_second_rate = Gp * (S * nu_second_rate + 2.0 * S_rate * nu_rate + S_second_rate * closed.velocity);
  // (61): M' = -(M ad_V + ad_V^T M), M'' = -(M' ad_V + M ad_V' + ad_V'^T M + ad_V^T M').
  const Eigen::MatrixXd M_rate = -(M * adV + adV.transpose() * M);
  const Eigen::MatrixXd M_second_rate = -(M_rate * adV + M * adV_rate + adV_rate.transpose() * M + adV.transpose() * M_rate);
  const Eigen::VectorXd momentum_rate = M * V_rate + M_rate * closed.V;                                          // (62)
  const Eigen::VectorXd momentum_second_rate = M * V_second_rate + 2.0 * M_rate * V_rate + M_second_rate * closed.V;  // (62)
  const Eigen::MatrixXd St = S.transpose(), adVt = adV.transpose();
  const Eigen::VectorXd hbar_rate =
      St * adVt * Gc * momentum_rate + St * (Gc * momentum_second_rate - Gc * M * Gp * S * nu_second_rate);  // (16)
  const Eigen::VectorXd gravity_rate = -St * adVt * Gc * M * closed.G_I + St * Gc * (M * adV + adVt * M) * closed.G_I;  // (17-18)
  const Eigen::VectorXd applied_rate = St * (Gc * adVt - adVt * Gc) * closed.W_app;                                // (19)
  return closed.mass * nu_second_rate + hbar_rate + gravity_rate + applied_rate;
}

}  // namespace liembs::testing
