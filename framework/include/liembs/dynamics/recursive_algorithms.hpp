#pragma once
// The recursive O(n) dynamics family of papers 000/001, written once over a representation
// policy (representations.hpp): RNEA, ABA, CRBA (+ Cholesky), gravity forces and a Coriolis
// matrix, as free functions over the const model (tree_model.hpp) and the representation's
// workspace (TreeWorkspace<Policy>, kinematics_algorithms.hpp). RecursiveDynamics<Policy> at
// the bottom is the bound evaluator a representation plugin hands out: it owns a model and a
// workspace, and its virtual functions (TreeDynamics) are the only virtual calls.
//
// Fast paths one representation can use sit beside the generic path, chosen by a named
// trait of the policy (representations.hpp): constant_inertia (node inertias need no pose),
// transform_is_relative_pose (the joint pose is written into T_i), separate_walk_form (CRBA's
// world-frame screws) and elemental_crba (CRBA in elemental body frames on shallow trees,
// elemental_mass_matrix.hpp).
#include <liembs/dynamics/kinematics_algorithms.hpp>
#include <liembs/error.hpp>

#include <memory>
#include <string>

namespace liembs {
namespace recursive {

template <class Policy>
void inverse_dynamics(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, const Eigen::VectorXd& acceleration, Eigen::VectorXd& force) {
  m.check_sizes(state, &acceleration, "acceleration");
  kinematics::root_kinematics(m, w, state);
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  force.resize(m.nodes.velocity_dimension());
  w.root_acceleration = kinematics::root_gravity_acceleration(m, w);
  if (m.nodes.floating_base)
    w.root_acceleration += w.base_to_body * acceleration.head<6>() + Policy::frame_rate_term(state.base, state.base_twist);
  const bool poses = m.world_loads;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    kinematics::node_kinematics(m, w, k, state, true, poses);
    w.A[k] = w.T[k].apply(kinematics::parent_acceleration(m, w, i)) + w.c[k];
    add_screw(w.A[k], w.S[k], acceleration(offset + i));
    w.W[k] = kinematics::newton_euler_wrench(m, w, k);
  }
  kinematics::apply_loads(m, w, -1.0);
  if (m.nodes.floating_base) w.root_wrench = w.root_inertia * w.root_acceleration + Policy::bias_wrench(state.base, w.root_inertia, w.root_twist) + w.root_load;
  for (int i = n - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    force(offset + i) = screw_dot(w.S[k], w.W[k]);
    const int p = m.nodes.parent[k];
    if (p >= 0) w.T[k].add_transpose_to(w.W[k], w.W[static_cast<std::size_t>(p)]);
    else if (m.nodes.floating_base) w.T[k].add_transpose_to(w.W[k], w.root_wrench);
  }
  if (m.nodes.floating_base) force.head<6>() = w.base_to_body.transpose() * w.root_wrench;
}

template <class Policy>
void forward_dynamics(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, const Eigen::VectorXd& force, Eigen::VectorXd& acceleration) {
  m.check_sizes(state, &force, "force");
  kinematics::root_kinematics(m, w, state);
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  const bool poses = m.world_loads;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    kinematics::node_kinematics(m, w, k, state, true, poses);
    const auto& M = kinematics::node_inertia(m, w, k);
    w.articulated[k] = kinematics::node_inertia_matrix(m, w, k, M);  // (a copy)
    w.W[k] = Policy::bias_wrench(w.pose[k], M, w.V[k]);  // articulated bias wrench p_i
  }
  kinematics::apply_loads(m, w, -1.0);
  if (m.nodes.floating_base) w.root_articulated = w.root_inertia;  // (a fixed base needs no 6x6 copy)
  Vec6 root_bias = Vec6::Zero();
  if (m.nodes.floating_base) root_bias = Policy::bias_wrench(state.base, w.root_inertia, w.root_twist) + w.root_load;
  for (int i = n - 1; i >= 0; --i) {  // articulated inertias and bias wrenches, leaves first
    const auto k = static_cast<std::size_t>(i);
    w.U[k] = inertia_times_screw(w.articulated[k], w.S[k]);
    w.D[k] = screw_dot(w.S[k], w.U[k]);
    if (!(w.D[k] > 1e-14 * (1.0 + w.articulated[k].diagonal().sum())))  // trace: the scale of a PSD matrix
      throw SimulationError("singular configuration: the articulated inertia of degree of freedom '" +
                            m.nodes.dof_names[k] + "' vanishes (aligned joint axes?)");
    w.u[k] = force(offset + i) - screw_dot(w.S[k], w.W[k]);
    const int p = m.nodes.parent[k];
    if (p < 0 && !m.nodes.floating_base) continue;  // the world takes whatever reaches it
    Mat6& projected = w.articulated[k];  // not needed afterwards: projected in place
    projected.noalias() -= w.U[k] * (w.U[k].transpose() / w.D[k]);
    Vec6 projected_bias = w.W[k] + w.U[k] * (w.u[k] / w.D[k]);
    projected_bias.noalias() += projected * w.c[k];
    if (p >= 0) {
      const auto parent = static_cast<std::size_t>(p);
      w.articulated[parent] += w.T[k].congruence(projected);
      w.T[k].add_transpose_to(projected_bias, w.W[parent]);
    } else {
      w.root_articulated += w.T[k].congruence(projected);
      w.T[k].add_transpose_to(projected_bias, root_bias);
    }
  }
  acceleration.resize(m.nodes.velocity_dimension());
  w.root_acceleration = kinematics::root_gravity_acceleration(m, w);
  if (m.nodes.floating_base) {
    // I^A_0 A_0 + p_0 = W_applied: the base has no joint, its force is an applied wrench.
    // (Only ABA maps back from the policy's base coordinates: RNEA makes no inverse.)
    w.base_to_body_inverse = w.base_to_body.inverse();
    w.base_from_body_wrench = w.base_to_body_inverse.transpose();
    const Vec6 applied = w.base_from_body_wrench * force.head<6>();
    const Vec6 base_acceleration = w.root_articulated.ldlt().solve(applied - root_bias);
    w.root_acceleration = base_acceleration;
    acceleration.head<6>() = w.base_to_body_inverse * (base_acceleration - kinematics::root_gravity_acceleration(m, w) -
                                                      Policy::frame_rate_term(state.base, state.base_twist));
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    w.A[k] = w.T[k].apply(kinematics::parent_acceleration(m, w, i)) + w.c[k];
    const double qdd = (w.u[k] - w.U[k].dot(w.A[k])) / w.D[k];
    add_screw(w.A[k], w.S[k], qdd);
    acceleration(offset + i) = qdd;
  }
}

template <class Policy>
void mass_matrix(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, Eigen::MatrixXd& mass) {
  m.check_sizes(state, nullptr, "");
  // M does not depend on the pose of a floating base: moving the whole system leaves its
  // kinetic energy, q and the base's body twist unchanged. So the base is placed at the
  // identity, where every policy's coordinates of the base are its body coordinates and
  // the world frame of the walk is the base frame: the base block is the composite inertia
  // of the whole tree, and the base rows are the walk's F_i themselves (no transform).
  w.base_pose = Pose{};
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  const int nv = m.nodes.velocity_dimension();
  if (w.elemental) {  // a shallow tree, in a policy whose composites live in body frames
    mass.resize(nv, nv);
    w.elemental->compute(state.q, mass);  // (writes the zeros of unrelated entries too)
    return;
  }
  // Every entry is written below except those of unrelated degrees of freedom (on
  // different branches), which are zero: none on a chain.
  if (m.branched) mass.setZero(nv, nv);
  else mass.resize(nv, nv);
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k)
    kinematics::node_kinematics(m, w, k, state, false, Policy::separate_walk_form);  // a separate walk form needs world poses
  // Composite inertias, leaves first, as 10 parameters (a sum of rigid-body inertias is
  // one). At the identity, the base's inertia is m.base_rigid in every policy. (Made in
  // the kinematics loop instead, the nodes' own measured up to 15 % slower on chains.)
  auto& composite = w.rigid_composite;
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) composite[k] = Policy::composite(w.pose[k], m.rigid[k]);
  w.root_composite = m.base_rigid;
  for (int i = n - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    const int p = m.nodes.parent[k];
    if (p >= 0) composite[static_cast<std::size_t>(p)] += Policy::composite_to_parent(w.T[k], composite[k]);
    else if (m.nodes.floating_base) w.root_composite += Policy::composite_to_parent(w.T[k], composite[k]);
  }
  // Columns: M_ij = S_j . F_i at every ancestor j, with F_i = I_i S_i. The pairing is the
  // same in every frame, so every policy pairs in the world frame (its walk form:
  // representations.hpp) and F needs no transform on the way to the root.
  // The ancestors come from a list (no parent-pointer chase: on a chain its load latency
  // bounded the loop), and F sits in registers, so the dots are vectorized.
  const auto& S_walk = kinematics::walk_screws(m, w);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const Vec6 F = Policy::composite_times_screw(w.pose[k], composite[k], w.S[k], S_walk[k]);
    mass(offset + i, offset + i) = S_walk[k].dot(F);
    const int* const last = m.ancestors_list.data() + m.ancestors_begin[k + 1];
    for (const int* j = m.ancestors_list.data() + m.ancestors_begin[k]; j != last; ++j)
      mass(offset + i, offset + *j) = mass(offset + *j, offset + i) = S_walk[static_cast<std::size_t>(*j)].dot(F);
    if (m.nodes.floating_base) {
      mass.block<6, 1>(0, offset + i) = F;
      mass.block<1, 6>(offset + i, 0) = F.transpose();
    }
  }
  if (m.nodes.floating_base) mass.topLeftCorner<6, 6>() = w.root_composite.matrix();
}

template <class Policy>
void forward_dynamics_cholesky(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, const Eigen::VectorXd& force,
                               Eigen::VectorXd& acceleration) {
  m.check_sizes(state, &force, "force");
  w.zero_acceleration.setZero(m.nodes.velocity_dimension());
  inverse_dynamics(m, w, state, w.zero_acceleration, w.bias);
  mass_matrix(m, w, state, w.mass);
  w.cholesky.compute(w.mass);
  if (w.cholesky.info() != Eigen::Success)
    throw SimulationError("singular configuration: the mass matrix is not positive definite");
  acceleration = w.cholesky.solve(force - w.bias);
}

template <class Policy>
void gravity_forces(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, Eigen::VectorXd& force) {
  TreeState at_rest = state;
  at_rest.base_twist.setZero();
  at_rest.qd.setZero(m.nodes.dof());
  w.zero_acceleration.setZero(m.nodes.velocity_dimension());
  inverse_dynamics(m, w, at_rest, w.zero_acceleration, force);
}

// One body's term of the Coriolis matrix (coriolis_matrix below).
inline void add_coriolis(const Mat6& M, const std::pair<Matrix6X, Matrix6X>& jacobian, const Eigen::VectorXd& u,
                         Eigen::MatrixXd& coriolis) {
  const Matrix6X& J = jacobian.first;
  const Vec6 V = J * u;
  const Mat6 ad_V = se3::ad(V);
  const Mat6 skew = M * ad_V - ad_V.transpose() * M;
  coriolis.noalias() += J.transpose() * (M * jacobian.second + skew * J);
}

template <class Policy>
void coriolis_matrix(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, Eigen::MatrixXd& coriolis) {
  // C = sum_b J_b^T (M_b J_b' + (M_b ad_{V_b} - ad_{V_b}^T M_b) J_b) in body-fixed terms: the
  // middle factor is skew, so M' - 2C is skew (000 section 6.2, C_skew).
  kinematics::spatial_jacobians(m, w, state);
  const int nv = m.nodes.velocity_dimension();
  coriolis.setZero(nv, nv);
  Eigen::VectorXd u(nv);
  if (m.nodes.floating_base) u << state.base_twist, state.qd;
  else u = state.qd;
  for (std::size_t i = 0; i < static_cast<std::size_t>(m.nodes.dof()); ++i) add_coriolis(m.nodes.inertia[i], kinematics::node_index_jacobian(m, w, static_cast<int>(i), state), u, coriolis);
  if (m.nodes.floating_base) add_coriolis(m.nodes.base_inertia, kinematics::node_index_jacobian(m, w, -1, state), u, coriolis);
}

}  // namespace recursive

template <class Policy>
class RecursiveDynamics final : public TreeDynamics {
 public:
  explicit RecursiveDynamics(std::shared_ptr<const KinematicTree> tree) : model_(std::move(tree)), workspace_(model_) {}

  std::string_view representation() const override { return Policy::name; }
  const KinematicTree& tree() const override { return model_.tree(); }

  void inverse_dynamics(const TreeState& state, const Eigen::VectorXd& acceleration, Eigen::VectorXd& force) override {
    recursive::inverse_dynamics(model_, workspace_, state, acceleration, force);
  }
  void forward_dynamics(const TreeState& state, const Eigen::VectorXd& force, Eigen::VectorXd& acceleration) override {
    recursive::forward_dynamics(model_, workspace_, state, force, acceleration);
  }
  void mass_matrix(const TreeState& state, Eigen::MatrixXd& mass) override {
    recursive::mass_matrix(model_, workspace_, state, mass);
  }
  void forward_dynamics_cholesky(const TreeState& state, const Eigen::VectorXd& force,
                                 Eigen::VectorXd& acceleration) override {
    recursive::forward_dynamics_cholesky(model_, workspace_, state, force, acceleration);
  }
  void gravity_forces(const TreeState& state, Eigen::VectorXd& force) override {
    recursive::gravity_forces(model_, workspace_, state, force);
  }
  void coriolis_matrix(const TreeState& state, Eigen::MatrixXd& coriolis) override {
    recursive::coriolis_matrix(model_, workspace_, state, coriolis);
  }
  void body_kinematics(const TreeState& state, const Eigen::VectorXd& acceleration, BodyKinematics& out) override {
    kinematics::body_kinematics(model_, workspace_, state, acceleration, out);
  }
  void body_jacobians(const TreeState& state, std::vector<Matrix6X>& jacobians,
                      std::vector<Matrix6X>* jacobian_rates) override {
    kinematics::body_jacobians(model_, workspace_, state, jacobians, jacobian_rates);
  }

 private:
  const TreeModel model_;
  TreeWorkspace<Policy> workspace_;
};

}  // namespace liembs
