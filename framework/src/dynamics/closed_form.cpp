// Closed-form equations of motion of a kinematic tree (see closed_form.hpp): brute-force
// evaluation of the definitions, the independent reference for the recursive algorithms.
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/lie/se3.hpp>

#include <stdexcept>
#include <string>

namespace liembs::closed_form {

namespace {

// Column of joint node j in u.
int joint_column(const KinematicTree& tree, int node) { return (tree.floating_base ? 6 : 0) + node; }

void check_state(const KinematicTree& tree, const TreeState& state) {
  if (state.q.size() != tree.dof() || state.qd.size() != tree.dof())
    throw std::invalid_argument("closed_form: the state has " + std::to_string(state.q.size()) + " coordinates and " +
                                std::to_string(state.qd.size()) + " rates, the tree has " +
                                std::to_string(tree.dof()) + " degrees of freedom");
}

void check_node(const KinematicTree& tree, int node) {
  if (node < -1 || node >= tree.dof())
    throw std::invalid_argument("closed_form: node " + std::to_string(node) + " out of range [-1, " +
                                std::to_string(tree.dof()) + ")");
}

// Nodes from the root to `node` (inclusive), root side first; empty for node -1.
std::vector<int> root_path(const KinematicTree& tree, int node) {
  std::vector<int> reversed;
  for (int i = node; i >= 0; i = tree.parent[static_cast<std::size_t>(i)]) reversed.push_back(i);
  return std::vector<int>(reversed.rbegin(), reversed.rend());
}

// C_i = C_root prod_{j on the path} B_j exp(X_j q_j)  (001 eq. 8 for trees).
Pose product_of_exponentials(const KinematicTree& tree, const TreeState& state, int node) {
  Pose C = root_pose(tree, state);
  for (const int j : root_path(tree, node)) {
    const auto uj = static_cast<std::size_t>(j);
    C = se3::compose(C, se3::compose(tree.reference[uj], se3::exp(tree.screw[uj] * state.q(j))));
  }
  return C;
}

// (0; R^T g): gravity as a body-fixed acceleration of a frame with orientation R.
Vec6 gravity_acceleration(const KinematicTree& tree, const Pose& C) {
  Vec6 a;
  a << Vec3::Zero(), C.R.transpose() * tree.gravity;
  return a;
}

// The root frame's Jacobian: [1_6, 0] for a floating base, zero for a fixed base.
Matrix6X root_jacobian(const KinematicTree& tree) {
  Matrix6X J = Matrix6X::Zero(6, tree.velocity_dimension());
  if (tree.floating_base) J.leftCols<6>().setIdentity();
  return J;
}

}  // namespace

Pose root_pose(const KinematicTree& tree, const TreeState& state) { return tree.floating_base ? state.base : Pose{}; }

std::vector<Pose> node_poses(const KinematicTree& tree, const TreeState& state) {
  check_state(tree, state);
  std::vector<Pose> poses;
  poses.reserve(static_cast<std::size_t>(tree.dof()));
  for (int i = 0; i < tree.dof(); ++i) poses.push_back(product_of_exponentials(tree, state, i));
  return poses;
}

Eigen::VectorXd generalized_velocity(const KinematicTree& tree, const TreeState& state) {
  check_state(tree, state);
  Eigen::VectorXd u(tree.velocity_dimension());
  if (tree.floating_base) u.head<6>() = state.base_twist;
  u.tail(tree.dof()) = state.qd;
  return u;
}

// J_{i,j} = Ad_{C_i^-1 C_j} X_j (001 eq. 16), J_{i,base} = Ad_{C_i^-1 C_root}; node -1 is
// the root frame itself.
Matrix6X node_body_jacobian(const KinematicTree& tree, const TreeState& state, int node) {
  check_state(tree, state);
  check_node(tree, node);
  if (node < 0) return root_jacobian(tree);
  Matrix6X J = Matrix6X::Zero(6, tree.velocity_dimension());
  const Pose Ci_inverse = se3::inverse(product_of_exponentials(tree, state, node));
  if (tree.floating_base) J.leftCols<6>() = se3::Ad(se3::compose(Ci_inverse, root_pose(tree, state)));
  for (const int j : root_path(tree, node)) {
    const Pose Cj = product_of_exponentials(tree, state, j);
    J.col(joint_column(tree, j)) = se3::Ad(se3::compose(Ci_inverse, Cj)) * tree.screw[static_cast<std::size_t>(j)];
  }
  return J;
}

// dJ_{i,j}/dq_k = [J_{i,j}, J_{i,k}] for j < k <= i on the path (000 eq. 6); the base
// columns are differentiated like columns of joints that precede every node.
Matrix6X node_body_jacobian_rate(const KinematicTree& tree, const TreeState& state, int node) {
  const Matrix6X J = node_body_jacobian(tree, state, node);
  Matrix6X Jdot = Matrix6X::Zero(6, tree.velocity_dimension());
  if (node < 0) return Jdot;
  const std::vector<int> path = root_path(tree, node);
  if (tree.floating_base) {
    for (int m = 0; m < 6; ++m)
      for (const int k : path)
        Jdot.col(m) += se3::bracket(J.col(m), J.col(joint_column(tree, k))) * state.qd(k);
  }
  for (std::size_t a = 0; a < path.size(); ++a) {
    const int j = joint_column(tree, path[a]);
    for (std::size_t b = a + 1; b < path.size(); ++b) {
      const int k = path[b];
      Jdot.col(j) += se3::bracket(J.col(j), J.col(joint_column(tree, k))) * state.qd(k);
    }
  }
  return Jdot;
}

std::vector<Pose> body_poses(const KinematicTree& tree, const TreeState& state) {
  check_state(tree, state);
  std::vector<Pose> poses;
  poses.reserve(tree.body_node.size());
  for (std::size_t b = 0; b < tree.body_node.size(); ++b)
    poses.push_back(se3::compose(product_of_exponentials(tree, state, tree.body_node[b]), tree.body_offset[b]));
  return poses;
}

// A body rigidly attached to node n at offset O: J_b = Ad_{O^-1} J_n.
Matrix6X body_jacobian(const KinematicTree& tree, const TreeState& state, std::size_t body) {
  if (body >= tree.body_node.size()) throw std::invalid_argument("closed_form: body index out of range");
  return se3::Ad_inverse(tree.body_offset[body]) * node_body_jacobian(tree, state, tree.body_node[body]);
}

Matrix6X body_jacobian_rate(const KinematicTree& tree, const TreeState& state, std::size_t body) {
  if (body >= tree.body_node.size()) throw std::invalid_argument("closed_form: body index out of range");
  return se3::Ad_inverse(tree.body_offset[body]) * node_body_jacobian_rate(tree, state, tree.body_node[body]);
}

BodyKinematics body_kinematics(const KinematicTree& tree, const TreeState& state,
                               const Eigen::VectorXd& acceleration) {
  const Eigen::VectorXd u = generalized_velocity(tree, state);
  if (acceleration.size() != u.size())
    throw std::invalid_argument("closed_form: acceleration has the wrong size");
  BodyKinematics kinematics;
  kinematics.poses = body_poses(tree, state);
  for (std::size_t b = 0; b < tree.body_node.size(); ++b) {
    const Matrix6X J = body_jacobian(tree, state, b);
    kinematics.twists.push_back(J * u);
    kinematics.accelerations.push_back(J * acceleration + body_jacobian_rate(tree, state, b) * u);
  }
  return kinematics;
}

// M = sum_i J_i^T M_i J_i (000 eq. 82) plus the base body.
Eigen::MatrixXd mass_matrix(const KinematicTree& tree, const TreeState& state) {
  check_state(tree, state);
  const int nv = tree.velocity_dimension();
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(nv, nv);
  if (tree.floating_base) {
    const Matrix6X J = root_jacobian(tree);
    M += J.transpose() * tree.base_inertia * J;
  }
  for (int i = 0; i < tree.dof(); ++i) {
    const Matrix6X J = node_body_jacobian(tree, state, i);
    M += J.transpose() * tree.inertia[static_cast<std::size_t>(i)] * J;
  }
  return M;
}

double kinetic_energy(const KinematicTree& tree, const TreeState& state) {
  const Eigen::VectorXd u = generalized_velocity(tree, state);
  return 0.5 * u.dot(mass_matrix(tree, state) * u);
}

// C = sum_i J_i^T (M_i Jdot_i + (M_i ad_{V_i} - ad_{V_i}^T M_i) J_i): 000 section 6.2, the
// skew-preserving factorization C_skew (Jdot_i = -A a J in the paper's system notation).
Eigen::MatrixXd coriolis_matrix(const KinematicTree& tree, const TreeState& state) {
  const Eigen::VectorXd u = generalized_velocity(tree, state);
  const int nv = tree.velocity_dimension();
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(nv, nv);
  auto add_body = [&](const Matrix6X& J, const Matrix6X& Jdot, const Mat6& inertia) {
    const Vec6 V = J * u;
    const Mat6 adV = se3::ad(V);
    const Mat6 B = inertia * adV - adV.transpose() * inertia;
    C += J.transpose() * (inertia * Jdot + B * J);
  };
  if (tree.floating_base) add_body(root_jacobian(tree), Matrix6X::Zero(6, nv), tree.base_inertia);
  for (int i = 0; i < tree.dof(); ++i)
    add_body(node_body_jacobian(tree, state, i), node_body_jacobian_rate(tree, state, i),
             tree.inertia[static_cast<std::size_t>(i)]);
  return C;
}

// -sum_i J_i^T M_i (0; R_i^T g): M_i (0; a) = (m c x a; m a) is the wrench of the force
// m a at the centre of mass c, about the node origin.
Eigen::VectorXd gravity_forces(const KinematicTree& tree, const TreeState& state) {
  check_state(tree, state);
  Eigen::VectorXd force = Eigen::VectorXd::Zero(tree.velocity_dimension());
  if (tree.floating_base)
    force -= root_jacobian(tree).transpose() * (tree.base_inertia * gravity_acceleration(tree, state.base));
  const std::vector<Pose> poses = node_poses(tree, state);
  for (int i = 0; i < tree.dof(); ++i) {
    const auto ui = static_cast<std::size_t>(i);
    force -= node_body_jacobian(tree, state, i).transpose() * (tree.inertia[ui] * gravity_acceleration(tree, poses[ui]));
  }
  return force;
}

Eigen::VectorXd inverse_dynamics(const KinematicTree& tree, const TreeState& state,
                                 const Eigen::VectorXd& acceleration) {
  const Eigen::VectorXd u = generalized_velocity(tree, state);
  if (acceleration.size() != u.size())
    throw std::invalid_argument("closed_form: acceleration has the wrong size");
  return mass_matrix(tree, state) * acceleration + coriolis_matrix(tree, state) * u + gravity_forces(tree, state);
}

Eigen::VectorXd forward_dynamics(const KinematicTree& tree, const TreeState& state, const Eigen::VectorXd& force) {
  const Eigen::VectorXd u = generalized_velocity(tree, state);
  if (force.size() != u.size()) throw std::invalid_argument("closed_form: force has the wrong size");
  const Eigen::LLT<Eigen::MatrixXd> cholesky(mass_matrix(tree, state));
  if (cholesky.info() != Eigen::Success)
    throw std::runtime_error("closed_form: the mass matrix is not positive definite");
  return cholesky.solve(force - coriolis_matrix(tree, state) * u - gravity_forces(tree, state));
}

}  // namespace liembs::closed_form
