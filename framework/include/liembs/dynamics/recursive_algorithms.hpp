#pragma once
// The recursive O(n) algorithms of papers 000/001 written once over a representation policy
// (representations.hpp) and instantiated by the representation plugins: forward
// kinematics, RNEA, ABA, CRBA (+ Cholesky), Jacobians and a Coriolis matrix. Per-node data
// lives in preallocated arrays; the only virtual call is the TreeDynamics entry point.
//
// The kernels run on the tree with node frames aligned to the joint screws
// (align_node_frames): each joint motion is a rotation about z and/or a shift along z,
// computed with one sincos, and for the body-fixed representation the node inertia is
// constant and no world pose is needed. The small kernels are forced inline.
//
// Every algorithm uses the same three relations, in the policy's coordinates:
//   V_i = T_i V_parent + S_i q'_i                      (twist recursion)
//   A_i = T_i A_parent + c_i + S_i q''_i                (acceleration recursion)
//   W_i = M_i A_i + b_i - W_i^ext + sum_children T_c^T W_c,   Q_i = S_i^T W_i
#include <liembs/dynamics/elemental_mass_matrix.hpp>
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/sincos.hpp>
#include <liembs/plugin/representation.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace liembs {

template <class Policy>
class RecursiveDerivatives;  // derivative_algorithms.hpp: uses the joint poses and tree data below
template <class Policy>
class RecursiveHigherOrder;  // higher_order_algorithms.hpp: the same
template <class Policy>
class RecursiveGeometricDerivatives;  // geometric_derivative_algorithms.hpp: the same

template <class Policy>
class RecursiveDynamics final : public TreeDynamics {
 public:
  using Transform = typename Policy::Transform;

  explicit RecursiveDynamics(std::shared_ptr<const KinematicTree> tree)
      : tree_(std::move(tree)), aligned_(align_node_frames(*tree_)), nodes_(aligned_.tree) {
    const auto n = static_cast<std::size_t>(nodes_.dof());
    pose_.resize(n);
    T_.resize(n);
    S_.resize(n);
    V_.resize(n);
    c_.resize(n);
    A_.resize(n);
    W_.resize(n);
    articulated_.resize(n);
    U_.resize(n);
    D_.resize(n);
    u_.resize(n);
    for (const auto& load : nodes_.loads) world_loads_ = world_loads_ || load.world_frame;
    for (const Mat6& M : nodes_.inertia) {
      rigid_.push_back(RigidInertia::from_matrix(M));
      centroidal_.push_back(CentroidalInertia::from(rigid_.back()));
    }
    base_rigid_ = RigidInertia::from_matrix(nodes_.base_inertia);
    for (const Pose& B : nodes_.reference) {
      reference_columns_.push_back((Vec6() << B.R.col(0), B.R.col(1)).finished());
      reference_columns_turned_.push_back((Vec6() << B.R.col(1), -B.R.col(0)).finished());
      reference_rest_.push_back((Vec6() << B.R.col(2), B.r).finished());
      reference_shift_.push_back((Vec6() << Vec3::Zero(), B.R.col(2)).finished());
    }
    if (!Policy::transform_is_relative_pose) relative_.resize(n);
    rigid_composite_.resize(rigid_.size());
    for (std::size_t k = 0; k < n; ++k) {
      ancestors_begin_.push_back(ancestors_.size());
      for (int j = nodes_.parent[k]; j >= 0; j = nodes_.parent[static_cast<std::size_t>(j)]) ancestors_.push_back(j);
    }
    ancestors_begin_.push_back(ancestors_.size());
    // CRBA writes M_ij for i, j related (one an ancestor of the other); on a tree with
    // branches the others are zero.
    branched_ = ancestors_.size() != n * (n - 1) / 2;
    if constexpr (Policy::elemental_crba) {
      elemental_.emplace(aligned_);
      if (!elemental_->preferred()) elemental_.reset();
    }
  }

  std::string_view representation() const override { return Policy::name; }
  const KinematicTree& tree() const override { return *tree_; }

  void inverse_dynamics(const TreeState& state, const Eigen::VectorXd& acceleration, Eigen::VectorXd& force) override {
    check_sizes(state, &acceleration, "acceleration");
    root_kinematics(state);
    const int n = nodes_.dof();
    const int offset = base_offset();
    force.resize(nodes_.velocity_dimension());
    root_acceleration_ = root_gravity_acceleration();
    if (nodes_.floating_base)
      root_acceleration_ += base_to_body_ * acceleration.head<6>() + Policy::frame_rate_term(state.base, state.base_twist);
    const bool poses = world_loads_;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      node_kinematics(k, state, true, poses);
      A_[k] = T_[k].apply(parent_acceleration(i)) + c_[k];
      add_screw(A_[k], S_[k], acceleration(offset + i));
      W_[k] = newton_euler_wrench(k);
    }
    apply_loads(-1.0);
    if (nodes_.floating_base) root_wrench_ = root_inertia_ * root_acceleration_ + Policy::bias_wrench(state.base, root_inertia_, root_twist_) + root_load_;
    for (int i = n - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      force(offset + i) = screw_dot(S_[k], W_[k]);
      const int p = nodes_.parent[k];
      if (p >= 0) T_[k].add_transpose_to(W_[k], W_[static_cast<std::size_t>(p)]);
      else if (nodes_.floating_base) T_[k].add_transpose_to(W_[k], root_wrench_);
    }
    if (nodes_.floating_base) force.head<6>() = base_to_body_.transpose() * root_wrench_;
  }

  void forward_dynamics(const TreeState& state, const Eigen::VectorXd& force, Eigen::VectorXd& acceleration) override {
    check_sizes(state, &force, "force");
    root_kinematics(state);
    const int n = nodes_.dof();
    const int offset = base_offset();
    const bool poses = world_loads_;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      node_kinematics(k, state, true, poses);
      const auto& M = inertia(k);
      articulated_[k] = inertia_matrix(k, M);  // (a copy)
      W_[k] = Policy::bias_wrench(pose_[k], M, V_[k]);  // articulated bias wrench p_i
    }
    apply_loads(-1.0);
    if (nodes_.floating_base) root_articulated_ = root_inertia_;  // (a fixed base needs no 6x6 copy)
    Vec6 root_bias = Vec6::Zero();
    if (nodes_.floating_base) root_bias = Policy::bias_wrench(state.base, root_inertia_, root_twist_) + root_load_;
    for (int i = n - 1; i >= 0; --i) {  // articulated inertias and bias wrenches, leaves first
      const auto k = static_cast<std::size_t>(i);
      U_[k] = inertia_times_screw(articulated_[k], S_[k]);
      D_[k] = screw_dot(S_[k], U_[k]);
      if (!(D_[k] > 1e-14 * (1.0 + articulated_[k].diagonal().sum())))  // trace: the scale of a PSD matrix
        throw SimulationError("singular configuration: the articulated inertia of degree of freedom '" +
                              nodes_.dof_names[k] + "' vanishes (aligned joint axes?)");
      u_[k] = force(offset + i) - screw_dot(S_[k], W_[k]);
      const int p = nodes_.parent[k];
      if (p < 0 && !nodes_.floating_base) continue;  // the world takes whatever reaches it
      Mat6& projected = articulated_[k];  // not needed afterwards: projected in place
      projected.noalias() -= U_[k] * (U_[k].transpose() / D_[k]);
      Vec6 projected_bias = W_[k] + U_[k] * (u_[k] / D_[k]);
      projected_bias.noalias() += projected * c_[k];
      if (p >= 0) {
        const auto parent = static_cast<std::size_t>(p);
        articulated_[parent] += T_[k].congruence(projected);
        T_[k].add_transpose_to(projected_bias, W_[parent]);
      } else {
        root_articulated_ += T_[k].congruence(projected);
        T_[k].add_transpose_to(projected_bias, root_bias);
      }
    }
    acceleration.resize(nodes_.velocity_dimension());
    root_acceleration_ = root_gravity_acceleration();
    if (nodes_.floating_base) {
      // I^A_0 A_0 + p_0 = W_applied: the base has no joint, its force is an applied wrench.
      // (Only ABA maps back from the policy's base coordinates: RNEA makes no inverse.)
      base_to_body_inverse_ = base_to_body_.inverse();
      base_from_body_wrench_ = base_to_body_inverse_.transpose();
      const Vec6 applied = base_from_body_wrench_ * force.head<6>();
      const Vec6 base_acceleration = root_articulated_.ldlt().solve(applied - root_bias);
      root_acceleration_ = base_acceleration;
      acceleration.head<6>() = base_to_body_inverse_ * (base_acceleration - root_gravity_acceleration() -
                                                        Policy::frame_rate_term(state.base, state.base_twist));
    }
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      A_[k] = T_[k].apply(parent_acceleration(i)) + c_[k];
      const double qdd = (u_[k] - U_[k].dot(A_[k])) / D_[k];
      add_screw(A_[k], S_[k], qdd);
      acceleration(offset + i) = qdd;
    }
  }

  void mass_matrix(const TreeState& state, Eigen::MatrixXd& mass) override {
    check_sizes(state, nullptr, "");
    // M does not depend on the pose of a floating base: moving the whole system leaves its
    // kinetic energy, q and the base's body twist unchanged. So the base is placed at the
    // identity, where every policy's coordinates of the base are its body coordinates and
    // the world frame of the walk is the base frame: the base block is the composite inertia
    // of the whole tree, and the base rows are the walk's F_i themselves (no transform).
    base_pose_ = Pose{};
    const int n = nodes_.dof();
    const int offset = base_offset();
    const int nv = nodes_.velocity_dimension();
    if (elemental_) {  // a shallow tree, in a policy whose composites live in body frames
      mass.resize(nv, nv);
      elemental_->compute(state.q, mass);  // (writes the zeros of unrelated entries too)
      return;
    }
    // Every entry is written below except those of unrelated degrees of freedom (on
    // different branches), which are zero: none on a chain.
    if (branched_) mass.setZero(nv, nv);
    else mass.resize(nv, nv);
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k)
      node_kinematics(k, state, false, Policy::separate_walk_form);  // a separate walk form needs world poses
    // Composite inertias, leaves first, as 10 parameters (a sum of rigid-body inertias is
    // one). At the identity, the base's inertia is base_rigid_ in every policy. (Made in
    // the kinematics loop instead, the nodes' own measured up to 15 % slower on chains.)
    auto& composite = rigid_composite_;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) composite[k] = Policy::composite(pose_[k], rigid_[k]);
    root_composite_ = base_rigid_;
    for (int i = n - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      const int p = nodes_.parent[k];
      if (p >= 0) composite[static_cast<std::size_t>(p)] += Policy::composite_to_parent(T_[k], composite[k]);
      else if (nodes_.floating_base) root_composite_ += Policy::composite_to_parent(T_[k], composite[k]);
    }
    // Columns: M_ij = S_j . F_i at every ancestor j, with F_i = I_i S_i. The pairing is the
    // same in every frame, so every policy pairs in the world frame (its walk form:
    // representations.hpp) and F needs no transform on the way to the root.
    // The ancestors come from a list (no parent-pointer chase: on a chain its load latency
    // bounded the loop), and F sits in registers, so the dots are vectorized.
    const auto& S_walk = walk_screws();
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const Vec6 F = Policy::composite_times_screw(pose_[k], composite[k], S_[k], S_walk[k]);
      mass(offset + i, offset + i) = S_walk[k].dot(F);
      const int* const last = ancestors_.data() + ancestors_begin_[k + 1];
      for (const int* j = ancestors_.data() + ancestors_begin_[k]; j != last; ++j)
        mass(offset + i, offset + *j) = mass(offset + *j, offset + i) = S_walk[static_cast<std::size_t>(*j)].dot(F);
      if (nodes_.floating_base) {
        mass.block<6, 1>(0, offset + i) = F;
        mass.block<1, 6>(offset + i, 0) = F.transpose();
      }
    }
    if (nodes_.floating_base) mass.topLeftCorner<6, 6>() = root_composite_.matrix();
  }

  void forward_dynamics_cholesky(const TreeState& state, const Eigen::VectorXd& force,
                                 Eigen::VectorXd& acceleration) override {
    check_sizes(state, &force, "force");
    zero_acceleration_.setZero(nodes_.velocity_dimension());
    inverse_dynamics(state, zero_acceleration_, bias_);
    mass_matrix(state, mass_);
    cholesky_.compute(mass_);
    if (cholesky_.info() != Eigen::Success)
      throw SimulationError("singular configuration: the mass matrix is not positive definite");
    acceleration = cholesky_.solve(force - bias_);
  }

  void gravity_forces(const TreeState& state, Eigen::VectorXd& force) override {
    TreeState at_rest = state;
    at_rest.base_twist.setZero();
    at_rest.qd.setZero(nodes_.dof());
    zero_acceleration_.setZero(nodes_.velocity_dimension());
    inverse_dynamics(at_rest, zero_acceleration_, force);
  }

  void body_kinematics(const TreeState& state, const Eigen::VectorXd& acceleration, BodyKinematics& out) override {
    check_sizes(state, &acceleration, "acceleration");
    kinematics(state, true);
    const int n = nodes_.dof();
    const int offset = base_offset();
    root_acceleration_ = Vec6::Zero();
    if (nodes_.floating_base)
      root_acceleration_ = base_to_body_ * acceleration.head<6>() + Policy::frame_rate_term(state.base, state.base_twist);
    node_body_twist_.resize(static_cast<std::size_t>(n));
    node_body_acceleration_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      A_[k] = T_[k].apply(parent_acceleration(i)) + c_[k];
      add_screw(A_[k], S_[k], acceleration(offset + i));
      const Mat6 Phi = Policy::to_body(pose_[k]);
      node_body_twist_[k] = Phi.lu().solve(V_[k]);
      node_body_acceleration_[k] = Phi.lu().solve(A_[k] - Policy::frame_rate_term(pose_[k], node_body_twist_[k]));
    }
    const std::size_t bodies = nodes_.body_node.size();
    out.poses.resize(bodies);
    out.twists.resize(bodies);
    out.accelerations.resize(bodies);
    for (std::size_t b = 0; b < bodies; ++b) {
      const int node = nodes_.body_node[b];
      const Pose& offset_pose = nodes_.body_offset[b];
      Pose frame;
      Vec6 twist = Vec6::Zero(), rate = Vec6::Zero();
      if (node >= 0) {
        frame = pose_[static_cast<std::size_t>(node)];
        twist = node_body_twist_[static_cast<std::size_t>(node)];
        rate = node_body_acceleration_[static_cast<std::size_t>(node)];
      } else if (nodes_.floating_base) {
        frame = state.base;
        twist = state.base_twist;
        rate = acceleration.head<6>();
      }
      const Mat6 to_offset = se3::Ad_inverse(offset_pose);
      out.poses[b] = se3::compose(frame, offset_pose);
      out.twists[b] = to_offset * twist;
      out.accelerations[b] = to_offset * rate;
    }
  }

  void body_jacobians(const TreeState& state, std::vector<Matrix6X>& jacobians,
                      std::vector<Matrix6X>* jacobian_rates) override {
    check_sizes(state, nullptr, "");
    spatial_jacobians(state);
    const std::size_t bodies = nodes_.body_node.size();
    const int nv = nodes_.velocity_dimension();
    jacobians.assign(bodies, Matrix6X::Zero(6, nv));
    if (jacobian_rates) jacobian_rates->assign(bodies, Matrix6X::Zero(6, nv));
    for (std::size_t b = 0; b < bodies; ++b) {
      const int node = nodes_.body_node[b];
      if (node < 0 && !nodes_.floating_base) continue;  // welded to the world
      const Pose body_pose = se3::compose(node >= 0 ? pose_[static_cast<std::size_t>(node)] : state.base, nodes_.body_offset[b]);
      const Mat6 to_body = se3::Ad_inverse(body_pose);
      const Vec6 body_spatial_twist = node >= 0 ? spatial_twist_[static_cast<std::size_t>(node)] : spatial_base_twist_;
      for (int column : ancestor_columns(node)) {
        jacobians[b].col(column) = to_body * spatial_columns_.col(column);
        // J^b = Ad_C^-1 J^s  =>  J^b' = Ad_C^-1 (J^s' - ad_{V^s} J^s)   (000 eq. 17)
        if (jacobian_rates)
          (*jacobian_rates)[b].col(column) =
              to_body * (spatial_column_rates_.col(column) - se3::ad(body_spatial_twist) * spatial_columns_.col(column));
      }
    }
  }

  void coriolis_matrix(const TreeState& state, Eigen::MatrixXd& coriolis) override {
    // C = sum_b J_b^T (M_b J_b' + (M_b ad_{V_b} - ad_{V_b}^T M_b) J_b) in body-fixed terms: the
    // middle factor is skew, so M' - 2C is skew (000 section 6.2, C_skew).
    spatial_jacobians(state);
    const int nv = nodes_.velocity_dimension();
    coriolis.setZero(nv, nv);
    Eigen::VectorXd u(nv);
    if (nodes_.floating_base) u << state.base_twist, state.qd;
    else u = state.qd;
    for (std::size_t i = 0; i < static_cast<std::size_t>(nodes_.dof()); ++i) add_coriolis(nodes_.inertia[i], node_index_jacobian(static_cast<int>(i), state), u, coriolis);
    if (nodes_.floating_base) add_coriolis(nodes_.base_inertia, node_index_jacobian(-1, state), u, coriolis);
  }

 private:
  friend class RecursiveDerivatives<Policy>;
  friend class RecursiveHigherOrder<Policy>;
  friend class RecursiveGeometricDerivatives<Policy>;

  int base_offset() const { return nodes_.floating_base ? 6 : 0; }

  void check_sizes(const TreeState& state, const Eigen::VectorXd* vector, const char* what) const {
    const auto n = static_cast<Eigen::Index>(nodes_.dof());
    if (state.q.size() != n || state.qd.size() != n)
      throw Error("tree state has " + std::to_string(state.q.size()) + " coordinates and " +
                  std::to_string(state.qd.size()) + " rates; the tree has " + std::to_string(n) + " degrees of freedom");
    if (vector && vector->size() != nodes_.velocity_dimension())
      throw Error(std::string(what) + " has " + std::to_string(vector->size()) + " entries; expected " +
                  std::to_string(nodes_.velocity_dimension()));
  }

  Vec6 root_gravity_acceleration() const {
    Vec6 a = Vec6::Zero();
    a.tail<3>() = -nodes_.gravity;  // (0; -g) in world-resolved coordinates of every policy's root
    if (nodes_.floating_base) {
      // (0; -R^T g) in body coordinates of the base, mapped to the policy's coordinates.
      Vec6 body = Vec6::Zero();
      body.tail<3>() = -(base_pose_.R.transpose() * nodes_.gravity);
      return Policy::from_body(base_pose_, body);
    }
    return a;
  }

  const Vec6& parent_acceleration(int i) const {
    const int p = nodes_.parent[static_cast<std::size_t>(i)];
    return p >= 0 ? A_[static_cast<std::size_t>(p)] : root_acceleration_;
  }

  // The floating base (root) quantities of the policy.
  void root_kinematics(const TreeState& state) {
    base_pose_ = nodes_.floating_base ? state.base : Pose{};
    root_twist_ = nodes_.floating_base ? Policy::from_body(state.base, state.base_twist) : Vec6::Zero();
    if (nodes_.floating_base) {
      root_inertia_ = as_matrix(Policy::inertia(state.base, base_rigid_));
      base_to_body_ = Policy::to_body(state.base);
    }  // a fixed base keeps root_inertia_ = 0 from construction
  }

  // C_{parent,i} = B_i exp(X_i q_i) for an aligned screw X_i = (0, 0, a, 0, 0, l): B_i times a
  // rotation about z by a q and a shift along z by l q. Written into C as two 6-vectors of
  // its 12 numbers (R column by column, then r), in pairs (types.hpp, "Pairs"):
  // R's first two columns (B_0 cos + B_1 sin, B_1 cos - B_0 sin), then (B_2, r_B + B_2 l q).
  // (Written column by column instead, RNEA measured about 5% slower.)
  LIEMBS_STRONG_INLINE void joint_pose(std::size_t k, double q, Pose& C) const {
    static_assert(sizeof(Pose) == 12 * sizeof(double), "Pose is R then r, unpadded");
    const AxialScrew& X = aligned_.axial[k];
    Eigen::Map<Vec6, Eigen::Unaligned> rotated(C.R.data()), rest(C.R.data() + 6);
    if (X.angular != 0.0) {
      const SinCos angle = sincos(X.angular * q);
      rotated = angle.cos * reference_columns_[k] + angle.sin * reference_columns_turned_[k];
    } else {
      rotated = reference_columns_[k];
    }
    if (X.linear != 0.0) rest = reference_rest_[k] + reference_shift_[k] * (X.linear * q);
    else rest = reference_rest_[k];
  }

  // The node inertia in the policy's coordinates: the constant one, or the policy's
  // node_inertia of the node pose, built where it is used (a view applied in factors, or the
  // 10 parameters); never stored per node.
  LIEMBS_STRONG_INLINE decltype(auto) inertia(std::size_t k) const {
    if constexpr (Policy::constant_inertia) return (rigid_[k]);  // const RigidInertia&
    else return Policy::node_inertia(pose_[k], rigid_[k], centroidal_[k]);
  }
  // The same as a 6x6 matrix, given the node inertia M = inertia(k).
  template <class NodeInertia>
  LIEMBS_STRONG_INLINE decltype(auto) inertia_matrix(std::size_t k, const NodeInertia& M) const {
    if constexpr (Policy::constant_inertia) return (nodes_.inertia[k]);  // const Mat6&
    else return as_matrix(M);
  }


  // The joint screws in CRBA's walk form, the world frame (representations.hpp): S_ itself
  // (spatial), or computed.
  const auto& walk_screws() {
    if constexpr (Policy::separate_walk_form) {
      walk_screw_.resize(S_.size());
      for (std::size_t k = 0; k < S_.size(); ++k) walk_screw_[k] = Policy::walk_screw(pose_[k], S_[k]);
      return walk_screw_;
    } else {
      return S_;
    }
  }

  // Forward kinematics of node k (its parent done): transform, screw, inertia, and
  // optionally twist and velocity term; the world pose when the policy or the caller needs it.
  LIEMBS_STRONG_INLINE void node_kinematics(std::size_t k, const TreeState& state, bool with_velocities,
                                            bool world_pose) {
    const int p = nodes_.parent[k];
    const Pose& parent_pose = p >= 0 ? pose_[static_cast<std::size_t>(p)] : base_pose_;
    const auto i = static_cast<Eigen::Index>(k);
    // The joint pose is written in place: into T_i when T_i is its adjoint (body-fixed).
    // (relative_ is empty then: not even its element's address may be formed.)
    Pose* relative_slot;
    if constexpr (Policy::transform_is_relative_pose)
      relative_slot = &T_[k].C;
    else
      relative_slot = &relative_[k];
    const Pose& relative = *relative_slot;
    joint_pose(k, state.q(i), *relative_slot);
    if (Policy::needs_world_pose || world_pose) se3::compose_into(parent_pose, relative, pose_[k]);
    if constexpr (!Policy::transform_is_relative_pose) T_[k] = Policy::transform(parent_pose, pose_[k], relative);
    S_[k] = Policy::screw(pose_[k], aligned_.axial[k]);
    if (with_velocities) {
      const Vec6& parent_twist = p >= 0 ? V_[static_cast<std::size_t>(p)] : root_twist_;
      const double qd = state.qd(i);
      if constexpr (requires { Policy::twist_and_velocity_term(T_[k], pose_[k], parent_twist, S_[k], qd, V_[k], c_[k]); }) {
        Policy::twist_and_velocity_term(T_[k], pose_[k], parent_twist, S_[k], qd, V_[k], c_[k]);  // (fused: mixed)
      } else {
        V_[k] = T_[k].apply(parent_twist);
        add_screw(V_[k], S_[k], qd);
        c_[k] = Policy::velocity_term(parent_pose, pose_[k], parent_twist, V_[k], S_[k], qd);
      }
    }
  }

  // The Newton-Euler wrench M_i A_i + b_i of node k, fused by the policy where that saves work.
  LIEMBS_STRONG_INLINE Vec6 newton_euler_wrench(std::size_t k) const {
    const auto& M = inertia(k);
    if constexpr (requires { Policy::newton_euler_wrench(pose_[k], M, A_[k], V_[k]); })
      return Policy::newton_euler_wrench(pose_[k], M, A_[k], V_[k]);
    else
      return M * A_[k] + Policy::bias_wrench(pose_[k], M, V_[k]);
  }

  void kinematics(const TreeState& state, bool with_velocities, bool world_poses = true) {
    root_kinematics(state);
    for (std::size_t k = 0; k < static_cast<std::size_t>(nodes_.dof()); ++k)
      node_kinematics(k, state, with_velocities, world_poses);
  }

  // Adds `sign` times the model's loads to the node wrenches W_ (and the base's).
  void apply_loads(double sign) {
    root_load_.setZero();
    for (const auto& load : nodes_.loads) {
      const Pose& frame = load.node >= 0 ? pose_[static_cast<std::size_t>(load.node)] : base_pose_;
      Vec6 body_wrench = load.wrench;
      if (load.world_frame) {
        const Vec3 force = frame.R.transpose() * load.wrench.tail<3>();
        body_wrench << frame.R.transpose() * load.wrench.head<3>() + load.point.cross(force), force;
      }
      const Vec6 wrench = sign * Policy::wrench_from_body(frame, body_wrench);
      if (load.node >= 0) W_[static_cast<std::size_t>(load.node)] += wrench;
      else root_load_ += wrench;
    }
  }

  // Spatial Jacobian columns J^s_j (000 eq. 71b) and their rates J^s_j' = [V^s_j, J^s_j]
  // (000 eq. 17), from this policy's poses and twists.
  void spatial_jacobians(const TreeState& state) {
    kinematics(state, true);
    const int n = nodes_.dof();
    const int offset = base_offset();
    const int nv = nodes_.velocity_dimension();
    spatial_columns_.resize(6, nv);
    spatial_column_rates_.resize(6, nv);
    spatial_twist_.resize(static_cast<std::size_t>(n));
    spatial_base_twist_ = nodes_.floating_base ? Vec6(se3::Ad(state.base) * state.base_twist) : Vec6::Zero();
    if (nodes_.floating_base) {
      const Mat6 Ad_base = se3::Ad(state.base);
      spatial_columns_.leftCols<6>() = Ad_base;
      spatial_column_rates_.leftCols<6>() = se3::ad(spatial_base_twist_) * Ad_base;  // d/dt Ad_C = ad_{V^s} Ad_C
    }
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const Mat6 Phi = Policy::to_body(pose_[k]);
      spatial_twist_[k] = se3::Ad(pose_[k]) * Phi.lu().solve(V_[k]);
      const Vec6 column = se3::Ad(pose_[k]) * nodes_.screw[k];
      spatial_columns_.col(offset + i) = column;
      spatial_column_rates_.col(offset + i) = se3::bracket(spatial_twist_[k], column);
    }
  }

  std::vector<int> ancestor_columns(int node) const {
    std::vector<int> columns;
    for (int j = node; j >= 0; j = nodes_.parent[static_cast<std::size_t>(j)]) columns.push_back(base_offset() + j);
    if (nodes_.floating_base)
      for (int c = 0; c < 6; ++c) columns.push_back(c);
    return columns;
  }

  // Body Jacobian of a node frame (node -1: the base) and its rate, from spatial columns.
  std::pair<Matrix6X, Matrix6X> node_index_jacobian(int node, const TreeState& state) const {
    const int nv = nodes_.velocity_dimension();
    Matrix6X J = Matrix6X::Zero(6, nv), Jdot = Matrix6X::Zero(6, nv);
    const Pose& frame = node >= 0 ? pose_[static_cast<std::size_t>(node)] : state.base;
    const Vec6& twist = node >= 0 ? spatial_twist_[static_cast<std::size_t>(node)] : spatial_base_twist_;
    const Mat6 to_body = se3::Ad_inverse(frame);
    for (int column : ancestor_columns(node)) {
      J.col(column) = to_body * spatial_columns_.col(column);
      Jdot.col(column) = to_body * (spatial_column_rates_.col(column) - se3::ad(twist) * spatial_columns_.col(column));
    }
    return {J, Jdot};
  }

  static void add_coriolis(const Mat6& M, const std::pair<Matrix6X, Matrix6X>& jacobian, const Eigen::VectorXd& u,
                           Eigen::MatrixXd& coriolis) {
    const Matrix6X& J = jacobian.first;
    const Vec6 V = J * u;
    const Mat6 ad_V = se3::ad(V);
    const Mat6 skew = M * ad_V - ad_V.transpose() * M;
    coriolis.noalias() += J.transpose() * (M * jacobian.second + skew * J);
  }

  std::shared_ptr<const KinematicTree> tree_;  // as the user compiled it
  AlignedTree aligned_;
  const KinematicTree& nodes_;  // aligned_.tree: the node frames the kernels work in
  bool world_loads_ = false;    // a load given in the world frame needs the node poses
  // The ancestors of node k, nearest first: ancestors_[ancestors_begin_[k] .. ancestors_begin_[k + 1]).
  std::vector<int> ancestors_;
  std::vector<std::size_t> ancestors_begin_;
  std::vector<Pose> pose_;
  std::vector<Transform> T_;
  // Of the reference poses B_i = (R, r) (joint_pose): (B_0; B_1), (B_1; -B_0), (B_2; r), (0; B_2).
  std::vector<Vec6> reference_columns_, reference_columns_turned_, reference_rest_, reference_shift_;
  std::vector<Pose> relative_;  // C_{parent,i}, where the transform does not hold it
  std::vector<RigidInertia> rigid_;            // node inertias in the node frames
  std::vector<CentroidalInertia> centroidal_;  // the same about the centres of mass
  RigidInertia base_rigid_;                    // the floating base's, in its frame
  std::vector<RigidInertia> rigid_composite_;  // CRBA's composites, in the policy's composite form
  RigidInertia root_composite_;                // CRBA's composite of the whole tree (floating base)
  bool branched_ = false;                      // some degrees of freedom are unrelated (CRBA's zeros)
  std::optional<ElementalMassMatrix> elemental_;  // CRBA in elemental body frames, where preferred
  std::vector<typename Policy::Screw> S_;       // the joint screws in the policy's coordinates
  std::vector<Vec6> V_, c_, A_, W_, U_, walk_screw_;
  std::vector<Mat6> articulated_;
  std::vector<double> D_, u_;
  Pose base_pose_;
  Vec6 root_twist_ = Vec6::Zero(), root_acceleration_ = Vec6::Zero(), root_wrench_ = Vec6::Zero(),
       root_load_ = Vec6::Zero();
  Mat6 root_articulated_;  // ABA's root inertia (floating base)
  Mat6 root_inertia_ = Mat6::Zero(), base_to_body_ = Mat6::Identity(), base_to_body_inverse_ = Mat6::Identity(),
       base_from_body_wrench_ = Mat6::Identity();
  Eigen::VectorXd zero_acceleration_, bias_;
  Eigen::MatrixXd mass_;
  Eigen::LLT<Eigen::MatrixXd> cholesky_;
  std::vector<Vec6> node_body_twist_, node_body_acceleration_, spatial_twist_;
  Vec6 spatial_base_twist_ = Vec6::Zero();
  Matrix6X spatial_columns_, spatial_column_rates_;
};

}  // namespace liembs
