#pragma once
// Derivatives of inverse dynamics with respect to the geometric parameters of the joints
// (paper 000 section 6.2): the reference configurations B_i and the joint screws X_i
// (tree_geometric_derivatives.hpp for the parameters, docs/derivatives.md). Closed form and
// recursive, O(n d) like the configuration derivatives, no finite differences, no automatic
// differentiation. It reuses the world-frame sweep of derivative_algorithms.hpp (poses from
// the representation's kernels, so one shared recursion for the four representations, as
// for dtau/dq) and reads like its algorithm box; the notation is the same (S, V, Psi, A,
// F, I^c, B^c, L^c in the sweep's frame, p the parent node, root values V_0, a_g + Ad_C0 u_0').
//
// 000 section 6.2: with B_i(pi) = B_i exp(U pi), C_i = C_p B_i exp(U pi) exp(X_i q_i), a
// geometric parameter is a "virtual joint" of zero rate placed before joint i: it moves the
// subtree of i (joint i's axis included) by the world screw T = Ad_{G_i} U, G_i = C_p B_i the
// node frame at q_i = 0. Inserting it into the dtau/dq column formula (derivative_algorithms.hpp)
// with its rate and acceleration zero (V_T = V_p, A_T = A_p):
//   (R1) T_i = Ad_{G_i}                        (one column per direction U = e_c of xi)
//        Psi_T = [V_p, T],  Phi_T = [A_p, T] + [V_p, Psi_T]                       (000 eqs. 17, 18)
//        G_T = -ad_T^T F_i + I^c_i Phi_T - B^c_i Psi_T - L^c_i T
//   (R2) dtau_r/dxi = S_r . (I^c_r Phi_T - B^c_r Psi_T - L^c_r T)  for r in the subtree of i (i included),
//        dtau_r/dxi = S_r . G_T  for r above i,   d(base wrench)/dxi = Ad_C0^T G_T (= G_T in
//        the sweep's frame, which is the base's for a floating base).
// The screw X_i enters twice. Its exponential moves the node pose, C_i = G_i exp(X_i q_i):
// d exp(Z) = (dexp_Z dZ)^ exp(Z) with dexp_Z = sum ad_Z^k/(k+1)! (se3::dexp_right), so this
// part is the virtual joint of (R1) along U = q_i dexp_{X_i q_i} dX:
//   (R3) dtau/dX (pose part) = dtau/dxi_i . (q_i dexp_{X_i q_i}).
// And the world screw S_i = Ad_{G_i} X_i changes by Ad_{G_i} dX, of which the virtual joint
// carried [T, S_i]; the rest is E = Ad_{C_i} dX (since 1 + ad_Z dexp_Z = Ad_{exp Z}). It
// changes the twist of the subtree by e = E q'_i and the acceleration of node i by
// E q''_i + [V_p, E] q'_i (000 eq. 18), below i by the carried [e, S_k] q'_k; the
// Newton-Euler wrenches then change by M_l a - B_l e (the velocity coupling of
// derivative_algorithms.hpp), with a = E q''_i + [V_p + V_i, E] q'_i:
//   (R4) dtau_r/dX (screw part) = S_r . (I^c_r a - B^c_r e)  for r in the subtree of i,
//        plus F_i . E for r = i (tau_i = S_i . F_i),
//        S_r . H_i for r above i and Ad_C0^T H_i (= H_i) for the base, H_i = I^c_i a - B^c_i e.
// Frames: xi and X are in the child body frame (the node frame of compile_tree); the
// kernels' node frames are aligned to the screws (align_node_frames, node frame K_i), so
// G_i = C'_p K_p^-1 B_i and C_i = C'_i K_i^-1 with C' the kernels' poses.
#include <liembs/dynamics/derivative_algorithms.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>

namespace liembs {

template <class Policy>
class RecursiveGeometricDerivatives final : public TreeGeometricDerivatives {
 public:
  explicit RecursiveGeometricDerivatives(std::shared_ptr<const KinematicTree> tree) : model_(std::move(tree)), sweep_(model_) {
    const KinematicTree& original = model_.tree();
    const AlignedTree& aligned = model_.aligned;
    const auto n = static_cast<std::size_t>(original.dof());
    first_nodes_ = joint_first_nodes(original);
    for (std::size_t k = 0; k < n; ++k) {
      const int p = original.parent[k];
      const Pose parent_alignment = p >= 0 ? aligned.alignment[static_cast<std::size_t>(p)] : Pose{};
      rest_in_parent_.push_back(se3::compose(se3::inverse(parent_alignment), original.reference[k]));
      unalign_.push_back(se3::inverse(aligned.alignment[k]));
    }
    IS_.resize(n);
    BS_.resize(n);
    LS_.assign(n, Vec3::Zero());
    T_.resize(n);
    Psi_.resize(n);
    Phi_.resize(n);
    G_.resize(n);
    E_.resize(n);
    a_.resize(n);
    e_.resize(n);
    H_.resize(n);
  }

  std::string_view representation() const override { return Policy::name; }
  const KinematicTree& tree() const override { return model_.tree(); }

  void inverse_dynamics_geometric_derivatives(const TreeState& state, const Eigen::VectorXd& acceleration,
                                              GeometricDerivatives& out) override {
    auto& d = sweep_;
    model_.check_sizes(state, &acceleration, "acceleration");
    derivatives::forward_pass(model_, d, state, &acceleration, true);
    derivatives::backward_pass(model_, d);
    derivatives::generalized_forces(model_, d, out.force);
    column_quantities(state, acceleration);
    const int n = model_.nodes.dof(), nv = model_.nodes.velocity_dimension(), offset = model_.base_offset();
    const bool floating = model_.nodes.floating_base;
    by_node_.setZero(nv, 6 * n);
    out.force_by_screw.setZero(nv, 6 * n);
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const int row = offset + i;
      // Row k against the columns of k and its ancestors (k in their subtrees), (R2) and (R4).
      row_entries(k, row, k, out.force_by_screw);
      for (const int j : model_.ancestors(k)) row_entries(k, row, static_cast<std::size_t>(j), out.force_by_screw);
      out.force_by_screw.block<1, 6>(row, 6 * i) += d.F[k].transpose() * E_[k];
      // The columns of k against the rows above it.
      for (const int j : model_.ancestors(k)) {
        const Vec6& S = d.S[static_cast<std::size_t>(j)];
        by_node_.block<1, 6>(offset + j, 6 * i) = S.transpose() * G_[k];
        out.force_by_screw.block<1, 6>(offset + j, 6 * i) = S.transpose() * H_[k];
      }
      if (floating) {
        by_node_.block<6, 6>(0, 6 * i) = G_[k];  // (the sweep's frame is the base's: S_0 = 1)
        out.force_by_screw.block<6, 6>(0, 6 * i) = H_[k];
      }
    }
    // (R3), and the reference columns of each joint's first node.
    const KinematicTree& original = tree();
    for (int i = 0; i < n; ++i) {
      const double q = state.q(i);
      const Mat6 pose_part = q * se3::dexp_right(Vec6(q * original.screw[static_cast<std::size_t>(i)]));
      out.force_by_screw.middleCols<6>(6 * i).noalias() += by_node_.middleCols<6>(6 * i) * pose_part;
    }
    out.force_by_reference.resize(nv, 6 * static_cast<Eigen::Index>(first_nodes_.size()));
    for (std::size_t m = 0; m < first_nodes_.size(); ++m)
      out.force_by_reference.middleCols<6>(6 * static_cast<Eigen::Index>(m)) = by_node_.middleCols<6>(6 * first_nodes_[m]);
  }

 private:
  // Per node: the row factors I^c S, B^c^T S, L^c^T S and the column blocks of (R1) and (R4).
  void column_quantities(const TreeState& state, const Eigen::VectorXd& acceleration) {
    auto& d = sweep_;
    const int n = model_.nodes.dof(), offset = model_.base_offset();
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const Vec6& S = d.S[k];
      IS_[k] = d.composite[k] * S;
      BS_[k] = d.coupling[k].transpose_times(S);
      if (model_.world_loads) LS_[k] = d.loads[k].transpose_times(S);

      const int p = model_.nodes.parent[k];
      const auto parent = static_cast<std::size_t>(p);
      const Pose& parent_pose = p >= 0 ? d.pose[parent] : d.base_pose;
      const Vec6& parent_twist = p >= 0 ? d.V[parent] : d.root_twist;
      const Vec6& parent_acceleration = p >= 0 ? d.A[parent] : d.root_acceleration;
      const Mat6 ad_parent_twist = se3::ad(parent_twist);
      // (R1)
      T_[k] = se3::Ad(se3::compose(parent_pose, rest_in_parent_[k]));
      Psi_[k].noalias() = ad_parent_twist * T_[k];
      Phi_[k].noalias() = se3::ad(parent_acceleration) * T_[k];
      Phi_[k].noalias() += ad_parent_twist * Psi_[k];
      for (int c = 0; c < 6; ++c) {
        Vec6 column = representations::momentum_rate_bias(T_[k].col(c), d.F[k]) + d.composite[k] * Phi_[k].col(c) -
                      d.coupling[k] * Psi_[k].col(c);
        if (model_.world_loads) column -= d.loads[k] * T_[k].col(c);
        G_[k].col(c) = column;
      }
      // (R4)
      const double qd = state.qd(i), qdd = acceleration(offset + i);
      E_[k] = se3::Ad(se3::compose(d.pose[k], unalign_[k]));
      e_[k] = qd * E_[k];
      a_[k].noalias() = se3::ad(parent_twist + d.V[k]) * e_[k];
      a_[k] += qdd * E_[k];
      for (int c = 0; c < 6; ++c) H_[k].col(c) = d.composite[k] * a_[k].col(c) - d.coupling[k] * e_[k].col(c);
    }
  }

  // Row k (matrix row `row`) of the columns of node j, k in the subtree of j: (R2) and (R4).
  LIEMBS_STRONG_INLINE void row_entries(std::size_t k, int row, std::size_t j, Eigen::MatrixXd& by_screw) {
    const auto column = static_cast<Eigen::Index>(6 * j);
    Eigen::Matrix<double, 1, 6> entries = IS_[k].transpose() * Phi_[j] - BS_[k].transpose() * Psi_[j].template topRows<3>();
    if (model_.world_loads) entries -= LS_[k].transpose() * T_[j].template topRows<3>();
    by_node_.block<1, 6>(row, column) = entries;
    by_screw.block<1, 6>(row, column).noalias() += IS_[k].transpose() * a_[j] - BS_[k].transpose() * e_[j].template topRows<3>();
  }

  const TreeModel model_;
  DerivativeWorkspace sweep_;  // the forward and backward passes of the configuration derivatives (derivative_algorithms.hpp)
  std::vector<int> first_nodes_;
  std::vector<Pose> rest_in_parent_, unalign_;  // K_p^-1 B_i and K_i^-1 per node
  std::vector<Vec6> IS_;
  std::vector<Vec3> BS_, LS_;
  std::vector<Mat6> T_, Psi_, Phi_, G_, E_, a_, e_, H_;
  Eigen::MatrixXd by_node_;  // (R2) for every node
};

}  // namespace liembs
