#pragma once
// The kinematics and Jacobians family (papers 000/001): forward kinematics of the policy's
// twists and transforms, the per-node pieces the dynamics families share (node inertia,
// Newton-Euler wrench, loads), body kinematics and body Jacobians. Free functions over the
// const model (tree_model.hpp) and the representation's workspace TreeWorkspace<Policy>,
// which carries the policy; the small kernels are forced inline.
//
// Every algorithm uses the same three relations, in the policy's coordinates:
//   V_i = T_i V_parent + S_i q'_i                      (twist recursion)
//   A_i = T_i A_parent + c_i + S_i q''_i                (acceleration recursion)
//   W_i = M_i A_i + b_i - W_i^ext + sum_children T_c^T W_c,   Q_i = S_i^T W_i
// For the body-fixed representation the node inertia is constant and no world pose is needed.
#include <liembs/dynamics/elemental_mass_matrix.hpp>
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_model.hpp>
#include <liembs/lie/se3.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <optional>
#include <utility>
#include <vector>

namespace liembs {

// What the kinematics and RNEA/ABA/CRBA families of one representation write: per-node
// arrays sized once for the model, and the floating base's (root's) quantities.
template <class Policy>
struct TreeWorkspace {
  using Transform = typename Policy::Transform;

  explicit TreeWorkspace(const TreeModel& model) {
    const auto n = static_cast<std::size_t>(model.nodes.dof());
    pose.resize(n);
    T.resize(n);
    S.resize(n);
    V.resize(n);
    c.resize(n);
    A.resize(n);
    W.resize(n);
    articulated.resize(n);
    U.resize(n);
    D.resize(n);
    u.resize(n);
    if (!Policy::transform_is_relative_pose) relative.resize(n);
    rigid_composite.resize(n);
    if constexpr (Policy::elemental_crba) {  // the named trait of the body-frame CRBA path
      elemental.emplace(model.aligned);
      if (!elemental->preferred()) elemental.reset();
    }
  }

  std::vector<Pose> pose;  // world poses of the node frames (where the policy or the caller needs them)
  std::vector<Transform> T;
  std::vector<Pose> relative;  // C_{parent,i}, where the transform does not hold it
  std::vector<typename Policy::Screw> S;  // the joint screws in the policy's coordinates
  std::vector<Vec6> V, c, A, W, U, walk_screw;
  std::vector<Mat6> articulated;
  std::vector<double> D, u;
  std::vector<RigidInertia> rigid_composite;  // CRBA's composites, in the policy's composite form
  RigidInertia root_composite;                // CRBA's composite of the whole tree (floating base)
  std::optional<ElementalMassMatrix> elemental;  // CRBA in elemental body frames, where preferred
  Pose base_pose;
  Vec6 root_twist = Vec6::Zero(), root_acceleration = Vec6::Zero(), root_wrench = Vec6::Zero(),
       root_load = Vec6::Zero();
  Mat6 root_articulated;  // ABA's root inertia (floating base)
  Mat6 root_inertia = Mat6::Zero(), base_to_body = Mat6::Identity(), base_to_body_inverse = Mat6::Identity(),
       base_from_body_wrench = Mat6::Identity();
  Eigen::VectorXd zero_acceleration, bias;
  Eigen::MatrixXd mass;
  Eigen::LLT<Eigen::MatrixXd> cholesky;
  std::vector<Vec6> node_body_twist, node_body_acceleration, spatial_twist;
  Vec6 spatial_base_twist = Vec6::Zero();
  Matrix6X spatial_columns, spatial_column_rates;
};

namespace kinematics {

// V^b = Phi^-1 V for a node of pose C: the policy's closed form where it has one
// (representations.hpp, body_twist), else a solve with the LU of Phi = Policy::to_body(C).
template <class Policy>
LIEMBS_STRONG_INLINE Vec6 body_twist_of(const Pose& C, const Vec6& V) {
  if constexpr (requires { Policy::body_twist(C, V); }) return Policy::body_twist(C, V);
  else return Policy::to_body(C).lu().solve(V);
}

template <class Policy>
Vec6 root_gravity_acceleration(const TreeModel& m, const TreeWorkspace<Policy>& w) {
  Vec6 a = Vec6::Zero();
  a.tail<3>() = -m.nodes.gravity;  // (0; -g) in world-resolved coordinates of every policy's root
  if (m.nodes.floating_base) {
    // (0; -R^T g) in body coordinates of the base, mapped to the policy's coordinates.
    Vec6 body = Vec6::Zero();
    body.tail<3>() = -(w.base_pose.R.transpose() * m.nodes.gravity);
    return Policy::from_body(w.base_pose, body);
  }
  return a;
}

template <class Policy>
const Vec6& parent_acceleration(const TreeModel& m, const TreeWorkspace<Policy>& w, int i) {
  const int p = m.nodes.parent[static_cast<std::size_t>(i)];
  return p >= 0 ? w.A[static_cast<std::size_t>(p)] : w.root_acceleration;
}

// The floating base (root) quantities of the policy.
template <class Policy>
void root_kinematics(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state) {
  w.base_pose = m.nodes.floating_base ? state.base : Pose{};
  w.root_twist = m.nodes.floating_base ? Policy::from_body(state.base, state.base_twist) : Vec6::Zero();
  if (m.nodes.floating_base) {
    w.root_inertia = as_matrix(Policy::inertia(state.base, m.base_rigid));
    w.base_to_body = Policy::to_body(state.base);
  }  // a fixed base keeps w.root_inertia = 0 from construction
}

// The node inertia in the policy's coordinates: the constant one, or the policy's
// node_inertia of the node pose, built where it is used (a view applied in factors, or the
// 10 parameters); never stored per node.
template <class Policy>
LIEMBS_STRONG_INLINE decltype(auto) node_inertia(const TreeModel& m, const TreeWorkspace<Policy>& w, std::size_t k) {
  if constexpr (Policy::constant_inertia) return (m.rigid[k]);  // const RigidInertia&
  else return Policy::node_inertia(w.pose[k], m.rigid[k], m.centroidal[k]);
}

// The same as a 6x6 matrix, given the node inertia M = node_inertia(m, w, k).
template <class Policy, class NodeInertia>
LIEMBS_STRONG_INLINE decltype(auto) node_inertia_matrix(const TreeModel& m, const TreeWorkspace<Policy>&, std::size_t k, const NodeInertia& M) {
  if constexpr (Policy::constant_inertia) return (m.nodes.inertia[k]);  // const Mat6&
  else return as_matrix(M);
}

// The joint screws in CRBA's walk form, the world frame (representations.hpp): w.S itself
// (spatial), or computed.
template <class Policy>
const auto& walk_screws(const TreeModel&, TreeWorkspace<Policy>& w) {
  if constexpr (Policy::separate_walk_form) {
    w.walk_screw.resize(w.S.size());
    for (std::size_t k = 0; k < w.S.size(); ++k) w.walk_screw[k] = Policy::walk_screw(w.pose[k], w.S[k]);
    return w.walk_screw;
  } else {
    return w.S;
  }
}

// Forward kinematics of node k (its parent done): transform, screw, inertia, and
// optionally twist and velocity term; the world pose when the policy or the caller needs it.
template <class Policy>
LIEMBS_STRONG_INLINE void node_kinematics(const TreeModel& m, TreeWorkspace<Policy>& w, std::size_t k, const TreeState& state, bool with_velocities,
                                          bool world_pose) {
  const int p = m.nodes.parent[k];
  const Pose& parent_pose = p >= 0 ? w.pose[static_cast<std::size_t>(p)] : w.base_pose;
  const auto i = static_cast<Eigen::Index>(k);
  // The joint pose is written in place: into T_i when T_i is its adjoint (body-fixed).
  // (w.relative is empty then: not even its element's address may be formed.)
  Pose* relative_slot;
  if constexpr (Policy::transform_is_relative_pose)
    relative_slot = &w.T[k].C;
  else
    relative_slot = &w.relative[k];
  const Pose& relative = *relative_slot;
  joint_pose(m, k, state.q(i), *relative_slot);
  if (Policy::needs_world_pose || world_pose) se3::compose_into(parent_pose, relative, w.pose[k]);
  if constexpr (!Policy::transform_is_relative_pose) w.T[k] = Policy::transform(parent_pose, w.pose[k], relative);
  w.S[k] = Policy::screw(w.pose[k], m.aligned.axial[k]);
  if (with_velocities) {
    const Vec6& parent_twist = p >= 0 ? w.V[static_cast<std::size_t>(p)] : w.root_twist;
    const double qd = state.qd(i);
    if constexpr (requires { Policy::twist_and_velocity_term(w.T[k], w.pose[k], parent_twist, w.S[k], qd, w.V[k], w.c[k]); }) {
      Policy::twist_and_velocity_term(w.T[k], w.pose[k], parent_twist, w.S[k], qd, w.V[k], w.c[k]);  // (fused: mixed)
    } else {
      w.V[k] = w.T[k].apply(parent_twist);
      add_screw(w.V[k], w.S[k], qd);
      w.c[k] = Policy::velocity_term(parent_pose, w.pose[k], parent_twist, w.V[k], w.S[k], qd);
    }
  }
}

// The Newton-Euler wrench M_i A_i + b_i of node k, fused by the policy where that saves work.
template <class Policy>
LIEMBS_STRONG_INLINE Vec6 newton_euler_wrench(const TreeModel& m, const TreeWorkspace<Policy>& w, std::size_t k) {
  const auto& M = node_inertia(m, w, k);
  if constexpr (requires { Policy::newton_euler_wrench(w.pose[k], M, w.A[k], w.V[k]); })
    return Policy::newton_euler_wrench(w.pose[k], M, w.A[k], w.V[k]);
  else
    return M * w.A[k] + Policy::bias_wrench(w.pose[k], M, w.V[k]);
}

template <class Policy>
void forward_kinematics(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, bool with_velocities, bool world_poses = true) {
  root_kinematics(m, w, state);
  for (std::size_t k = 0; k < static_cast<std::size_t>(m.nodes.dof()); ++k)
    node_kinematics(m, w, k, state, with_velocities, world_poses);
}

// Adds `sign` times the model's loads to the node wrenches w.W (and the base's).
template <class Policy>
void apply_loads(const TreeModel& m, TreeWorkspace<Policy>& w, double sign) {
  w.root_load.setZero();
  for (const auto& load : m.nodes.loads) {
    const Pose& frame = load.node >= 0 ? w.pose[static_cast<std::size_t>(load.node)] : w.base_pose;
    Vec6 body_wrench = load.wrench;
    if (load.world_frame) {
      const Vec3 force = frame.R.transpose() * load.wrench.tail<3>();
      body_wrench << frame.R.transpose() * load.wrench.head<3>() + load.point.cross(force), force;
    }
    const Vec6 wrench = sign * Policy::wrench_from_body(frame, body_wrench);
    if (load.node >= 0) w.W[static_cast<std::size_t>(load.node)] += wrench;
    else w.root_load += wrench;
  }
}

// Spatial Jacobian columns J^s_j (000 eq. 71b) and their rates J^s_j' = [V^s_j, J^s_j]
// (000 eq. 17), from this policy's poses and twists.
template <class Policy>
void spatial_jacobians(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state) {
  forward_kinematics(m, w, state, true);
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  const int nv = m.nodes.velocity_dimension();
  w.spatial_columns.resize(6, nv);
  w.spatial_column_rates.resize(6, nv);
  w.spatial_twist.resize(static_cast<std::size_t>(n));
  w.spatial_base_twist = m.nodes.floating_base ? Vec6(se3::Ad(state.base) * state.base_twist) : Vec6::Zero();
  if (m.nodes.floating_base) {
    const Mat6 Ad_base = se3::Ad(state.base);
    w.spatial_columns.template leftCols<6>() = Ad_base;
    w.spatial_column_rates.template leftCols<6>() = se3::ad(w.spatial_base_twist) * Ad_base;  // d/dt Ad_C = ad_{V^s} Ad_C
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    w.spatial_twist[k] = se3::Ad(w.pose[k]) * body_twist_of<Policy>(w.pose[k], w.V[k]);
    const Vec6 column = se3::Ad(w.pose[k]) * m.nodes.screw[k];
    w.spatial_columns.col(offset + i) = column;
    w.spatial_column_rates.col(offset + i) = se3::bracket(w.spatial_twist[k], column);
  }
}

// The columns of a node's Jacobian: the node's, its ancestors' and the base's.
inline std::vector<int> ancestor_columns(const TreeModel& m, int node) {
  std::vector<int> columns;
  for (int j = node; j >= 0; j = m.nodes.parent[static_cast<std::size_t>(j)]) columns.push_back(m.base_offset() + j);
  if (m.nodes.floating_base)
    for (int c = 0; c < 6; ++c) columns.push_back(c);
  return columns;
}

// Body Jacobian of a node frame (node -1: the base) and its rate, from spatial columns.
template <class Policy>
std::pair<Matrix6X, Matrix6X> node_index_jacobian(const TreeModel& m, const TreeWorkspace<Policy>& w, int node, const TreeState& state) {
  const int nv = m.nodes.velocity_dimension();
  Matrix6X J = Matrix6X::Zero(6, nv), Jdot = Matrix6X::Zero(6, nv);
  const Pose& frame = node >= 0 ? w.pose[static_cast<std::size_t>(node)] : state.base;
  const Vec6& twist = node >= 0 ? w.spatial_twist[static_cast<std::size_t>(node)] : w.spatial_base_twist;
  const Mat6 to_body = se3::Ad_inverse(frame);
  for (int column : ancestor_columns(m, node)) {
    J.col(column) = to_body * w.spatial_columns.col(column);
    Jdot.col(column) = to_body * (w.spatial_column_rates.col(column) - se3::ad(twist) * w.spatial_columns.col(column));
  }
  return {J, Jdot};
}

template <class Policy>
void body_kinematics(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, const Eigen::VectorXd& acceleration, BodyKinematics& out) {
  m.check_sizes(state, &acceleration, "acceleration");
  forward_kinematics(m, w, state, true);
  const int n = m.nodes.dof();
  const int offset = m.base_offset();
  w.root_acceleration = Vec6::Zero();
  if (m.nodes.floating_base)
    w.root_acceleration = w.base_to_body * acceleration.head<6>() + Policy::frame_rate_term(state.base, state.base_twist);
  w.node_body_twist.resize(static_cast<std::size_t>(n));
  w.node_body_acceleration.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    w.A[k] = w.T[k].apply(parent_acceleration(m, w, i)) + w.c[k];
    add_screw(w.A[k], w.S[k], acceleration(offset + i));
    w.node_body_twist[k] = body_twist_of<Policy>(w.pose[k], w.V[k]);
    w.node_body_acceleration[k] =
        body_twist_of<Policy>(w.pose[k], w.A[k] - Policy::frame_rate_term(w.pose[k], w.node_body_twist[k]));
  }
  const std::size_t bodies = m.nodes.body_node.size();
  out.poses.resize(bodies);
  out.twists.resize(bodies);
  out.accelerations.resize(bodies);
  for (std::size_t b = 0; b < bodies; ++b) {
    const int node = m.nodes.body_node[b];
    const Pose& offset_pose = m.nodes.body_offset[b];
    Pose frame;
    Vec6 twist = Vec6::Zero(), rate = Vec6::Zero();
    if (node >= 0) {
      frame = w.pose[static_cast<std::size_t>(node)];
      twist = w.node_body_twist[static_cast<std::size_t>(node)];
      rate = w.node_body_acceleration[static_cast<std::size_t>(node)];
    } else if (m.nodes.floating_base) {
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

template <class Policy>
void body_jacobians(const TreeModel& m, TreeWorkspace<Policy>& w, const TreeState& state, std::vector<Matrix6X>& jacobians,
                    std::vector<Matrix6X>* jacobian_rates) {
  m.check_sizes(state, nullptr, "");
  spatial_jacobians(m, w, state);
  const std::size_t bodies = m.nodes.body_node.size();
  const int nv = m.nodes.velocity_dimension();
  jacobians.assign(bodies, Matrix6X::Zero(6, nv));
  if (jacobian_rates) jacobian_rates->assign(bodies, Matrix6X::Zero(6, nv));
  for (std::size_t b = 0; b < bodies; ++b) {
    const int node = m.nodes.body_node[b];
    if (node < 0 && !m.nodes.floating_base) continue;  // welded to the world
    const Pose body_pose = se3::compose(node >= 0 ? w.pose[static_cast<std::size_t>(node)] : state.base, m.nodes.body_offset[b]);
    const Mat6 to_body = se3::Ad_inverse(body_pose);
    const Vec6 body_spatial_twist = node >= 0 ? w.spatial_twist[static_cast<std::size_t>(node)] : w.spatial_base_twist;
    for (int column : ancestor_columns(m, node)) {
      jacobians[b].col(column) = to_body * w.spatial_columns.col(column);
      // J^b = Ad_C^-1 J^s  =>  J^b' = Ad_C^-1 (J^s' - ad_{V^s} J^s)   (000 eq. 17)
      if (jacobian_rates)
        (*jacobian_rates)[b].col(column) =
            to_body * (w.spatial_column_rates.col(column) - se3::ad(body_spatial_twist) * w.spatial_columns.col(column));
    }
  }
}

}  // namespace kinematics
}  // namespace liembs
